import Coffer
import CofferTestSupport
import Testing

/// What sync does with entries that are not text and with HOTP counters, run as the clones of a team run
/// it: coffer installed only as `pass`, by absolute path, with a short `PATH`.
@Suite("sync keeps every byte of binary entries and never moves an HOTP counter back")
struct BinaryAndCounterSyncTests {
    /// Lines with a NUL and a byte that is never UTF-8, so a line-wise merge would find places to splice.
    static let binary: [UInt8] =
        Array("key\nline one\n".utf8) + [0, 0xFF] + Array("\nline two\nline three\n".utf8)

    static func changed(_ bytes: [UInt8], _ old: String, _ new: String) -> [UInt8] {
        var text = bytes
        let needle = Array(old.utf8)
        if let start = (0...(text.count - needle.count)).first(where: {
            Array(text[$0..<$0 + needle.count]) == needle
        }) {
            text.replaceSubrange(start..<start + needle.count, with: Array(new.utf8))
        }
        return text
    }

    @Test("A binary entry changed on one side arrives byte for byte, in both sync modes")
    func oneSideChanged() throws {
        for mode in ["rebase", "merge"] {
            let clones = try SyncClones(entries: [("x", "x\n")])
            try clones.git(clones.two, ["config", "coffer.syncmode", mode])
            try clones.insert(clones.one, "keystore", bytes: Self.binary)
            try clones.check(clones.one, ["sync"])
            try clones.check(clones.two, ["sync"])
            let mine = Self.changed(Self.binary, "line one", "line 1")
            try clones.insert(clones.one, "keystore", bytes: mine)
            try clones.check(clones.one, ["sync"])
            try clones.insert(clones.two, "other", "pw\n")
            try clones.check(clones.two, ["sync"])
            #expect(try clones.decrypted(clones.two, "keystore") == mine, "\(mode)")
            #expect(try clones.isClean(clones.two))
        }
    }

    @Test("A binary entry changed on both sides stops the sync, names it, changes nothing; the advice works")
    func bothSidesChanged() throws {
        for mode in ["rebase", "merge"] {
            let clones = try SyncClones(entries: [("x", "x\n")])
            try clones.git(clones.two, ["config", "coffer.syncmode", mode])
            try clones.insert(clones.one, "keys/store", bytes: Self.binary)
            try clones.check(clones.one, ["sync"])
            try clones.check(clones.two, ["sync"])
            // Changes in separate places: a line-wise merge would splice both into neither version.
            let one = Self.changed(Self.binary, "line one", "line 1")
            let two = Self.changed(Self.binary, "line three", "line 3")
            try clones.insert(clones.one, "keys/store", bytes: one)
            try clones.check(clones.one, ["sync"])
            try clones.insert(clones.two, "keys/store", bytes: two)
            let head = try clones.git(clones.two, ["rev-parse", "HEAD"])
            let result = try clones.run(clones.two, ["sync"])
            #expect(result.status == 1, "\(mode): \(result.outputText)")
            #expect(result.errorText.contains("cannot merge keys/store.gpg"), "\(result.errorText)")
            #expect(result.errorText.contains("not text"), "\(result.errorText)")
            #expect(result.errorText.split(separator: "\n").count == 1, "\(result.errorText)")
            #expect(try clones.git(clones.two, ["rev-parse", "HEAD"]) == head)
            #expect(try clones.isClean(clones.two))
            #expect(try clones.decrypted(clones.two, "keys/store") == two)
            #expect(
                try clones.git(clones.two, ["rev-parse", "origin/main"])
                    == clones.git(clones.one, ["rev-parse", "HEAD"]), "nothing pushed")
            // The way out the message gives: keep one version, then sync.
            _ = try clones.sandbox.run(["git", "-C", clones.two, "merge", "-q", "origin/main"])
            try clones.git(clones.two, ["checkout", "--theirs", "--", "keys/store.gpg"])
            try clones.git(clones.two, ["add", "keys/store.gpg"])
            try clones.check(clones.two, ["sync"])
            #expect(try clones.decrypted(clones.two, "keys/store") == one)
            try clones.check(clones.one, ["sync"])
            #expect(try clones.decrypted(clones.one, "keys/store") == one)
        }
    }

    @Test(
        "Merge by hand for a plain file names a binary entry both sides changed; its advice finishes the sync"
    )
    func mergeByHandNamesBinaryEntry() throws {
        for mode in ["rebase", "merge"] {
            let clones = try SyncClones(entries: [("x", "x\n")])
            try clones.git(clones.two, ["config", "coffer.syncmode", mode])
            try clones.insert(clones.one, "keys/store", bytes: Self.binary)
            try FileSystem.atomicWrite(clones.one + "/notes.txt", bytes: Array("base\n".utf8), mode: 0o644)
            try clones.git(clones.one, ["add", "notes.txt"])
            try clones.git(clones.one, ["commit", "-q", "-m", "notes"])
            try clones.check(clones.one, ["sync"])
            try clones.check(clones.two, ["sync"])
            let one = Self.changed(Self.binary, "line one", "line 1")
            // The plain file first, in a commit of its own: a rebase meets it before the entry.
            for (store, bytes, note) in [
                (clones.one, one, "one\n"), (clones.two, Self.binary + [0], "two\n"),
            ] {
                try FileSystem.atomicWrite(store + "/notes.txt", bytes: Array(note.utf8), mode: 0o644)
                try clones.git(store, ["commit", "-q", "-am", "notes"])
                try clones.insert(store, "keys/store", bytes: bytes)
            }
            try clones.check(clones.one, ["sync"])
            let stopped = try clones.run(clones.two, ["sync"])
            #expect(stopped.status == 1, "\(mode)")
            #expect(stopped.errorText.split(separator: "\n").count == 1, "\(stopped.errorText)")
            #expect(stopped.errorText.contains("fix notes.txt"), "\(mode): \(stopped.errorText)")
            // A rebase stops at the plain file, a merge at the entry: either way both are named.
            let advice =
                mode == "rebase"
                ? "Merge it by hand: in the store, git merge refs/remotes/origin/main, fix notes.txt and git add it, "
                    + "keep one version of keys/store.gpg"
                : "Keep one version: in the store, git merge refs/remotes/origin/main, then git checkout --ours "
                    + "(or --theirs) -- keys/store.gpg"
            #expect(stopped.errorText.contains(advice), "\(mode): \(stopped.errorText)")
            #expect(try clones.isClean(clones.two))
            // Everything the advice says, in one merge.
            _ = try clones.sandbox.run(["git", "-C", clones.two, "merge", "-q", "refs/remotes/origin/main"])
            try FileSystem.atomicWrite(
                clones.two + "/notes.txt", bytes: Array("one\ntwo\n".utf8), mode: 0o644)
            try clones.git(clones.two, ["checkout", "--theirs", "--", "keys/store.gpg"])
            try clones.git(clones.two, ["add", "notes.txt", "keys/store.gpg"])
            try clones.check(clones.two, ["sync"])
            #expect(try clones.decrypted(clones.two, "keys/store") == one, "\(mode)")
            #expect(try clones.isClean(clones.two))
            try clones.check(clones.one, ["sync"])
            #expect(try clones.git(clones.one, ["show", "HEAD:notes.txt"]) == "one\ntwo", "\(mode)")
        }
    }

    @Test(
        "git pull by hand runs the merge driver: a binary entry changed on both sides is left unmerged, as it was"
    )
    func mergeDriverLeavesBinaryUnmerged() throws {
        let clones = try SyncClones(entries: [("x", "x\n")])
        try clones.insert(clones.one, "keystore", bytes: Self.binary)
        try clones.check(clones.one, ["sync"])
        try clones.check(clones.two, ["sync"])
        try clones.insert(clones.one, "keystore", bytes: Self.changed(Self.binary, "line one", "line 1"))
        try clones.check(clones.one, ["sync"])
        let two = Self.changed(Self.binary, "line three", "line 3")
        try clones.insert(clones.two, "keystore", bytes: two)
        let pulled = try clones.sandbox.run(
            ["git", "-C", clones.two, "pull", "--no-rebase", "--no-edit", "-q"],
            environment: ["PATH": "/usr/bin:/bin"])
        #expect(pulled.status != 0, "the pull stops at the entry")
        let unmerged = try clones.git(clones.two, ["diff", "--name-only", "--diff-filter=U"])
        #expect(unmerged == "keystore.gpg")
        #expect(try clones.decrypted(clones.two, "keystore") == two, "this side as it was, nothing spliced")
    }

    static let secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"

    @Test("HOTP used on both clones: the greater counter wins, and no code is ever handed out twice")
    func countersNeverGoBack() throws {
        for mode in ["rebase", "merge"] {
            let clones = try SyncClones(entries: [
                ("bank", "pw\nlogin: me\notpauth://hotp/Bank:me?secret=\(Self.secret)&counter=0\nnotes\n")
            ])
            try clones.git(clones.two, ["config", "coffer.syncmode", mode])
            try clones.git(clones.one, ["config", "coffer.syncmode", mode])
            var handedOut: [String] = []
            func code(_ store: String) throws {
                handedOut.append(try clones.check(store, ["otp", "bank"]).outputText)
            }
            // Generated use: a seeded number of codes on each clone between syncs.
            var state: UInt64 = 4226
            func below(_ limit: UInt64) -> Int {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return Int((state >> 33) % limit)
            }
            for _ in 0..<3 {
                for _ in 0...below(3) { try code(clones.one) }
                for _ in 0...below(3) { try code(clones.two) }
                try clones.check(clones.one, ["sync"])
                try clones.check(clones.two, ["sync"])
                try clones.check(clones.one, ["sync"])
            }
            try code(clones.one)
            try code(clones.two)
            #expect(
                Set(handedOut).count == handedOut.count, "\(mode): a code was handed out twice: \(handedOut)")
            for store in [clones.one, clones.two] {
                let text = try #require(try clones.decrypted(store, "bank"))
                #expect(!EntryMerge.containsConflict(text), "\(mode)")
                #expect(String(decoding: text, as: UTF8.self).hasPrefix("pw\nlogin: me\n"))
            }
        }
    }

    @Test(
        "A pusher who lowers the counter, puts another URI first or wraps it past 64 bits gets no code twice")
    func pusherCannotRewindCounter() throws {
        let uri = "otpauth://hotp/Bank:me?secret=\(Self.secret)"
        let clones = try SyncClones(entries: [("bank", "pw\n\(uri)&counter=0\n")])
        var handedOut: [String] = []
        func code() throws {
            let result = try clones.run(clones.one, ["otp", "bank"])
            // An entry a sync left in conflict is refused: no code, which is never a code twice.
            // The code is the last line (git's commit line comes first).
            if result.status == 0 {
                handedOut.append(String(result.outputText.split(separator: "\n").last ?? ""))
            }
        }
        // The pusher (clone two) rewrites the entry from what the remote holds and pushes; clone one,
        // which may have used codes since its last sync, syncs.
        func push(_ rewrite: (String) -> String) throws {
            try clones.check(clones.two, ["sync"])
            let text = String(decoding: try #require(try clones.decrypted(clones.two, "bank")), as: UTF8.self)
            try clones.insert(clones.two, "bank", rewrite(text))
            try clones.check(clones.two, ["sync"])
            _ = try clones.run(clones.one, ["sync"])
        }
        for _ in 0..<3 { try code() }
        try clones.check(clones.one, ["sync"])
        // The counter put back to 0.
        try push { _ in "pw\n\(uri)&counter=0\n" }
        try code()
        try code()
        // Another URI line, same secret, an old counter, put first: after clone one synced its codes,
        // then while it used codes offline (a conflict, refused, or a merge).
        try clones.check(clones.one, ["sync"])
        try push { "pw\n\(uri)&counter=1&digits=6\n" + $0.dropFirst(3) }
        try code()
        try code()
        try push { "pw\n\(uri)&counter=2&digits=6\n" + $0.dropFirst(3) }
        for _ in 0..<3 { try code() }
        #expect(Set(handedOut).count == handedOut.count, "a code was handed out twice: \(handedOut)")
        #expect(handedOut.count >= 7, "\(handedOut)")
        // A counter past 64 bits, which would wrap to 5 (after the user settled the entry).
        try clones.insert(clones.one, "bank", "pw\n\(uri)&counter=20\n")
        try clones.check(clones.one, ["sync"])
        try push { _ in "pw\n\(uri)&counter=18446744073709551621\n" }
        let wrapped = try clones.run(clones.one, ["otp", "bank"])
        #expect(wrapped.status == 1, "\(wrapped.outputText)")
        #expect(wrapped.outputText.isEmpty, "no code from a counter past 64 bits")
        #expect(wrapped.errorText.contains("HOTP counter"), "\(wrapped.errorText)")
    }

    @Test("A counter a pusher lowers comes back raised on a clone that never used otp; no code twice")
    func otherCloneKeepsCounter() throws {
        let uri = "otpauth://hotp/Bank:me?secret=\(Self.secret)"
        let clones = try SyncClones(entries: [("bank", "pw\n\(uri)&counter=0\n")])
        let third = clones.sandbox.directory + "/three"
        try clones.check(third, ["clone", "file://" + clones.remote, "--path", third])
        var handedOut: [String] = []
        for _ in 0..<3 {
            let result = try clones.check(clones.one, ["otp", "bank"])
            handedOut.append(String(result.outputText.split(separator: "\n").last ?? ""))
        }
        try clones.check(clones.one, ["sync"])
        try clones.check(third, ["sync"])
        // Clone two, the pusher, puts the counter back.
        try clones.check(clones.two, ["sync"])
        try clones.insert(clones.two, "bank", "pw\n\(uri)&counter=0\n")
        try clones.check(clones.two, ["sync"])
        let synced = try clones.check(third, ["sync"])
        #expect(synced.outputText.contains("Kept the HOTP counter of bank"), "\(synced.outputText)")
        for _ in 0..<2 {
            let result = try clones.check(third, ["otp", "bank"])
            handedOut.append(String(result.outputText.split(separator: "\n").last ?? ""))
        }
        #expect(Set(handedOut).count == handedOut.count, "a code was handed out twice: \(handedOut)")
        #expect(try clones.git(third, ["status", "--porcelain"]) == "")
    }

    @Test(
        "A rollback in the same sync as the counter's rise, or under another name, still gives no code twice")
    func rollbackInOneSyncOrRenamed() throws {
        let uri = "otpauth://hotp/Bank:me?secret=\(Self.secret)"
        for how in ["same sync", "renamed", "copied"] {
            let clones = try SyncClones(entries: [("bank", "pw\n\(uri)&counter=0\n")])
            let third = clones.sandbox.directory + "/three"
            try clones.check(third, ["clone", "file://" + clones.remote, "--path", third])
            var handedOut: [String] = []
            for _ in 0..<3 {
                let result = try clones.check(clones.one, ["otp", "bank"])
                handedOut.append(String(result.outputText.split(separator: "\n").last ?? ""))
            }
            try clones.check(clones.one, ["sync"])
            // The third clone saw counter 3 before a renamed or copied rollback, not before one in the same sync.
            if how != "same sync" { try clones.check(third, ["sync"]) }
            // The pusher (clone two) puts the first ciphertext back with plain git.
            try clones.check(clones.two, ["sync"])
            let first =
                try clones.git(
                    clones.two, ["log", "--diff-filter=A", "--format=%H", "--", "bank.gpg"]
                ).split(separator: "\n").last.map(String.init) ?? ""
            let name = how == "same sync" ? "bank" : "bank-copy"
            if how == "renamed" { try clones.git(clones.two, ["rm", "-q", "bank.gpg"]) }
            let old = try clones.sandbox.run([
                "git", "-C", clones.two, "cat-file", "blob", "\(first):bank.gpg",
            ])
            #expect(old.status == 0 && !old.standardOutput.isEmpty)
            try FileSystem.atomicWrite(clones.two + "/\(name).gpg", bytes: old.standardOutput, mode: 0o600)
            try clones.git(clones.two, ["add", "\(name).gpg"])
            try clones.git(clones.two, ["commit", "-q", "-m", "tidy"])
            try clones.git(clones.two, ["push", "-q", "origin", "HEAD:main"])
            let synced = try clones.check(third, ["sync"])
            // A copy beside the entry it was taken from is left as it came; the counter the clone saw
            // for its secret is where otp moves on from.
            if how != "copied" {
                #expect(
                    synced.outputText.contains("Kept the HOTP counter of \(name)"),
                    "\(how): \(synced.outputText)")
            }
            for index in 0..<2 {
                let result = try clones.check(third, ["otp", name])
                handedOut.append(String(result.outputText.split(separator: "\n").last ?? ""))
                if how == "copied" && index == 0 {
                    #expect(result.errorText.contains("moving on from 3"), "\(result.errorText)")
                }
            }
            #expect(
                Set(handedOut).count == handedOut.count, "\(how): a code was handed out twice: \(handedOut)")
            #expect(try clones.git(third, ["status", "--porcelain"]) == "")
        }
    }

    /// Red team (pusher): the counter's rise and the entry's removal arrived in one sync, which then
    /// recorded nothing; the old ciphertext pushed back later found no counter to move on from.
    @Test("A counter seen in a sync that also removed the entry is kept: the old entry put back moves on")
    func counterSeenBeforeRemoval() throws {
        let uri = "otpauth://hotp/Bank:me?secret=\(Self.secret)"
        let clones = try SyncClones(entries: [("bank", "pw\n\(uri)&counter=3\n")])
        let old = try clones.sandbox.check(["git", "-C", clones.remote, "show", "main:bank.gpg"])
            .standardOutput
        var handedOut: [String] = []
        for _ in 0..<7 {
            let result = try clones.check(clones.one, ["otp", "bank"])
            handedOut.append(String(result.outputText.split(separator: "\n").last ?? ""))
        }
        try clones.check(clones.one, ["sync"])
        // The pusher removes the entry; two gets the rise and the removal in one sync.
        try clones.check(clones.one, ["rm", "-f", "bank"])
        try clones.check(clones.one, ["sync"])
        try clones.check(clones.two, ["sync"])
        #expect(!TestFiles.exists(clones.two + "/bank.gpg"))
        // Then puts the old ciphertext back (no need to read it).
        try TestFiles.write(old, to: clones.one + "/bank.gpg", mode: 0o600)
        try clones.git(clones.one, ["add", "bank.gpg"])
        try clones.git(clones.one, ["commit", "-q", "-m", "restore bank"])
        try clones.git(clones.one, ["push", "--quiet", "origin", "main"])
        try clones.check(clones.two, ["sync"])
        let result = try clones.check(clones.two, ["otp", "bank"])
        handedOut.append(String(result.outputText.split(separator: "\n").last ?? ""))
        #expect(Set(handedOut).count == handedOut.count, "a code was handed out twice: \(handedOut)")
    }

    /// Red team (pusher): a fresh clone's ledger knew no counter, and a pushed copy of an old version of
    /// the entry beside the original (which the sync did not touch) gave a code already handed out.
    @Test("A fresh clone given an old copy of an HOTP entry beside the original hands out no used code")
    func oldCopyOnAFreshClone() throws {
        let uri = "otpauth://hotp/Bank:me?secret=\(Self.secret)"
        let clones = try SyncClones(entries: [("bank", "pw\n\(uri)&counter=3\n")])
        let old = try clones.sandbox.check(["git", "-C", clones.remote, "show", "main:bank.gpg"])
            .standardOutput
        var handedOut: [String] = []
        for _ in 0..<4 {
            let result = try clones.check(clones.one, ["otp", "bank"])
            handedOut.append(String(result.outputText.split(separator: "\n").last ?? ""))
        }
        try clones.check(clones.one, ["sync"])
        let fresh = clones.sandbox.directory + "/fresh"
        try clones.check(clones.one, ["clone", clones.remote, "--path", fresh])
        // The pusher adds the old ciphertext under another name.
        try TestFiles.write(old, to: clones.one + "/bank-copy.gpg", mode: 0o600)
        try clones.git(clones.one, ["add", "bank-copy.gpg"])
        try clones.git(clones.one, ["commit", "-q", "-m", "copy"])
        try clones.git(clones.one, ["push", "--quiet", "origin", "main"])
        try clones.check(fresh, ["sync"])
        let result = try clones.check(fresh, ["otp", "bank-copy"])
        handedOut.append(String(result.outputText.split(separator: "\n").last ?? ""))
        #expect(Set(handedOut).count == handedOut.count, "a code was handed out twice: \(handedOut)")
    }

    /// Red team (pusher): the counter's rise and its rollback arrived through a merge by hand that sync
    /// had asked for; finishing that merge read no counter, and a code was handed out twice.
    @Test("A merge by hand that brings a lowered counter keeps the higher one; no code twice")
    func counterThroughMergeByHand() throws {
        let uri = "otpauth://hotp/Bank:me?secret=\(Self.secret)"
        let clones = try SyncClones(entries: [("bank", "pw\n\(uri)&counter=5\n")])
        try TestFiles.write("line1\n", to: clones.one + "/notes.txt")
        try clones.git(clones.one, ["add", "notes.txt"])
        try clones.git(clones.one, ["commit", "-qm", "notes"])
        try clones.check(clones.one, ["sync"])
        try clones.check(clones.two, ["sync"])
        let old = try clones.sandbox.check(["git", "-C", clones.remote, "show", "main:bank.gpg"])
            .standardOutput
        let used = try clones.check(clones.one, ["otp", "bank"])
        var handedOut = [String(used.outputText.split(separator: "\n").last ?? "")]
        try clones.check(clones.one, ["sync"])
        // The pusher puts the old counter back and changes the note two changes too.
        try TestFiles.write(old, to: clones.one + "/bank.gpg", mode: 0o600)
        try TestFiles.write("pusher\n", to: clones.one + "/notes.txt")
        try clones.git(clones.one, ["commit", "-qam", "tidy"])
        try clones.git(clones.one, ["push", "--quiet", "origin", "main"])
        try TestFiles.write("two\n", to: clones.two + "/notes.txt")
        try clones.git(clones.two, ["commit", "-qam", "two's note"])
        let stopped = try clones.run(clones.two, ["sync"])
        #expect(stopped.status == 1, "\(stopped.outputText)")
        _ = try? clones.git(clones.two, ["merge", "-q", "origin/main"])
        try TestFiles.write("two and pusher\n", to: clones.two + "/notes.txt")
        try clones.git(clones.two, ["add", "notes.txt"])
        let finished = try clones.run(clones.two, ["sync"])
        #expect(finished.status == 0, "\(finished.errorText)")
        let result = try clones.check(clones.two, ["otp", "bank"])
        handedOut.append(String(result.outputText.split(separator: "\n").last ?? ""))
        #expect(Set(handedOut).count == handedOut.count, "a code was handed out twice: \(handedOut)")
    }

    @Test("otp refuses an entry holding a conflict, with one line, and writes nothing")
    func otpRefusesConflict() throws {
        let clones = try SyncClones(entries: [
            ("bank", "pw\nlogin: me\notpauth://hotp/Bank:me?secret=\(Self.secret)&counter=0\n")
        ])
        try clones.insert(
            clones.one, "bank", "pw\nlogin: one\notpauth://hotp/Bank:me?secret=\(Self.secret)&counter=0\n")
        try clones.check(clones.one, ["sync"])
        try clones.insert(
            clones.two, "bank", "pw\nlogin: two\notpauth://hotp/Bank:me?secret=\(Self.secret)&counter=0\n")
        let synced = try clones.run(clones.two, ["sync"])
        #expect(synced.errorText.contains("Conflict in bank"), "\(synced.errorText)")
        let head = try clones.git(clones.two, ["rev-parse", "HEAD"])
        let before = try clones.decrypted(clones.two, "bank")
        let refused = try clones.run(clones.two, ["otp", "bank"])
        #expect(refused.status == 1)
        #expect(refused.standardOutput.isEmpty)
        #expect(refused.errorText.split(separator: "\n").count == 1, "\(refused.errorText)")
        #expect(refused.errorText.contains("merge conflict"), "\(refused.errorText)")
        #expect(try clones.git(clones.two, ["rev-parse", "HEAD"]) == head)
        #expect(try clones.decrypted(clones.two, "bank") == before)
    }

    @Test("A ledger that cannot be read or has lost its salt stops otp: it is never started again silently")
    func damagedLedgerStopsOTP() throws {
        let uri = "otpauth://hotp/Bank:me?secret=\(Self.secret)"
        let clones = try SyncClones(entries: [("bank", "pw\n\(uri)&counter=0\n")])
        try clones.check(clones.one, ["otp", "bank"])
        let ledger = clones.one + "/.git/coffer-hotp"
        let kept = try FileSystem.readFile(ledger)
        #expect(String(decoding: kept, as: UTF8.self).hasPrefix("salt "))
        let head = try clones.git(clones.one, ["rev-parse", "HEAD"])
        // The salt line lost: the counters can no longer be named, and a new salt would forget them.
        let damaged =
            Array(
                String(decoding: kept, as: UTF8.self).split(separator: "\n").dropFirst()
                    .joined(separator: "\n").utf8) + [10]
        try FileSystem.atomicWrite(ledger, bytes: damaged, mode: 0o600)
        let refused = try clones.run(clones.one, ["otp", "bank"])
        #expect(refused.status == 1)
        #expect(refused.standardOutput.isEmpty, "no code without the ledger")
        #expect(refused.errorText.split(separator: "\n").count == 1, "\(refused.errorText)")
        #expect(refused.errorText.contains("HOTP ledger"), "\(refused.errorText)")
        #expect(try FileSystem.readFile(ledger) == damaged, "the ledger is left for the user")
        // A ledger that cannot be read (a folder in its place) stops it too.
        try FileSystem.remove(ledger)
        try FileSystem.makeDirectories(ledger, mode: 0o700)
        let unreadable = try clones.run(clones.one, ["otp", "bank"])
        #expect(unreadable.status == 1)
        #expect(unreadable.standardOutput.isEmpty)
        #expect(unreadable.errorText.split(separator: "\n").count == 1, "\(unreadable.errorText)")
        #expect(try clones.git(clones.one, ["rev-parse", "HEAD"]) == head, "nothing committed")
        #expect(try clones.git(clones.one, ["status", "--porcelain"]) == "")
    }
}
