import Coffer
import CofferTestSupport
import Testing

/// A team store as a pusher attacks it: Alice uses coffer, installed only as `pass` and run by absolute
/// path with `PATH=/usr/bin:/bin`; Mallory can push to the shared remote with plain git and is meant to
/// read `shared/` only. Each test is one attack of SECURITY.md's "pusher to the shared remote".
struct Team {
    typealias Person = TeamSetupTests.Person

    let installed: InstalledAsPass
    let alice: Person
    let mallory: Person
    let remote: String
    let aliceKey: String
    let malloryKey: String
    /// Extra variables for Alice's commands (`PASSWORD_STORE_SIGNING_KEY`).
    let aliceEnvironment: [String: String]

    /// Mallory's plain git clone.
    var malloryClone: String { mallory.home + "/clone" }
    var store: String { alice.store }

    /// The store: `web/site` and `private/diary` for Alice alone, `shared/wifi` for both,
    /// `shared/board/minutes` for Alice alone inside `shared/` (its own `.gpg-id`); pushed, and cloned by
    /// Mallory with git.
    init(signing: Bool = false) throws {
        installed = try InstalledAsPass(git: false)
        remote = installed.sandbox.directory + "/remote.git"
        try installed.sandbox.check(["git", "init", "-q", "--bare", remote])
        alice = try Person(installed, "alice")
        mallory = try Person(installed, "mallory")
        aliceKey = try Self.makeKey(alice, "Alice <alice@coffer.test>")
        malloryKey = try Self.makeKey(mallory, "Mallory <mallory@coffer.test>")
        aliceEnvironment = signing ? ["PASSWORD_STORE_SIGNING_KEY": aliceKey] : [:]
        try check(["init", aliceKey])
        try check(["git", "init"])
        for (name, text) in [
            ("web/site", "site password\n"), ("private/diary", "diary v1\n"), ("shared/wifi", "wifi\n"),
            ("shared/board/minutes", "minutes v1\n"),
        ] {
            try check(["insert", "-m", "-f", name], input: text)
        }
        try check(["init", "-p", "private", aliceKey])
        try check(["init", "-p", "shared/board", aliceKey])
        try Self.give(malloryKey, from: mallory, to: alice)
        try check(["recipients", "add", "-p", "shared", malloryKey])
        _ = try alice.tool(["git", "-C", store, "remote", "add", "origin", "file://" + remote])
        try check(["sync"])
        try mallory.tool(["git", "clone", "-q", "-b", "main", "file://" + remote, malloryClone])
            .succeeded("mallory's clone")
    }

    /// Runs the installed `pass` as Alice.
    @discardableResult
    func run(_ arguments: [String], input: String = "", environment extra: [String: String] = [:]) throws
        -> ChildProcess.Output
    {
        var environment = alice.environment
        for (name, value) in aliceEnvironment.merging(extra, uniquingKeysWith: { $1 }) {
            environment[name] = value
        }
        return try installed.run(arguments, input: input, environment: environment)
    }

    @discardableResult
    func check(_ arguments: [String], input: String = "", environment extra: [String: String] = [:]) throws
        -> ChildProcess.Output
    {
        try run(arguments, input: input, environment: extra).exitedZero(
            "pass \(arguments.joined(separator: " "))")
    }

    /// Mallory changes her clone with `change` (given its folder), commits everything as herself and
    /// pushes, with plain git.
    @discardableResult
    func malloryPushes(_ message: String, signedBy signer: String? = nil, _ change: (String) throws -> Void)
        throws -> String
    {
        _ = try mallory.tool(["git", "-C", malloryClone, "pull", "-q", "--rebase"])
        try change(malloryClone)
        try mallory.tool(["git", "-C", malloryClone, "add", "-A"]).succeeded("git add")
        try mallory.tool(
            [
                "git", "-C", malloryClone, "-c", "user.name=Mallory", "-c", "user.email=mallory@coffer.test",
                "commit", "-q", "-m", message,
            ] + (signer.map { ["--gpg-sign=" + $0] } ?? [])
        ).succeeded("git commit")
        try mallory.tool(["git", "-C", malloryClone, "push", "-q"]).succeeded("git push")
        return try mallory.tool(["git", "-C", malloryClone, "rev-parse", "--short", "HEAD"]).outputText
    }

    /// The entry's plaintext as `person`'s gpg decrypts `file`, or `nil` when it cannot.
    func decrypted(_ file: String, by person: Person) throws -> String? {
        let output = try person.tool(["gpg", "--batch", "--quiet", "--decrypt", file])
        return output.status == 0 ? String(decoding: output.standardOutput, as: UTF8.self) : nil
    }

    /// The tip of Alice's branch.
    func head() throws -> String { try alice.head() }

    /// `git status --porcelain` in Alice's store.
    func uncommitted() throws -> String {
        try alice.tool(["git", "-C", store, "status", "--porcelain"]).outputText
    }

    /// Makes a key with an encryption subkey in `person`'s keyring.
    static func makeKey(_ person: Person, _ userID: String) throws -> String {
        try person.tool([
            "gpg", "--batch", "--passphrase", "", "--quick-gen-key", userID, "ed25519", "sign", "never",
        ]).succeeded("gpg --quick-gen-key")
        let listing = try person.tool(["gpg", "--batch", "--with-colons", "--list-keys", "=" + userID])
            .outputText
        guard let line = listing.split(separator: "\n").first(where: { $0.hasPrefix("fpr:") }) else {
            throw SandboxError("no key for \(userID)")
        }
        let fingerprint = String(line.split(separator: ":", omittingEmptySubsequences: false)[9])
        try person.tool([
            "gpg", "--batch", "--passphrase", "", "--quick-add-key", fingerprint, "cv25519", "encr", "never",
        ]).succeeded("gpg --quick-add-key")
        return fingerprint
    }

    /// The key id of the encryption subkey of `fingerprint` in `person`'s keyring.
    static func encryptionSubkeyID(_ fingerprint: String, of person: Person) throws -> String {
        let listing = try person.tool(["gpg", "--batch", "--with-colons", "--list-keys", fingerprint])
            .outputText
        guard let line = listing.split(separator: "\n").first(where: { $0.hasPrefix("sub:") }) else {
            throw SandboxError("no subkey for \(fingerprint)")
        }
        return String(line.split(separator: ":", omittingEmptySubsequences: false)[4])
    }

    /// `person`'s public key `fingerprint`, armored.
    static func export(_ fingerprint: String, from person: Person) throws -> String {
        try person.tool(["gpg", "--batch", "--armor", "--export", fingerprint]).outputText + "\n"
    }

    /// Imports `fingerprint` from one keyring into another (as data: no certification).
    static func give(_ fingerprint: String, from owner: Person, to other: Person) throws {
        try other.tool(["gpg", "--batch", "--import"], input: export(fingerprint, from: owner))
            .succeeded("gpg --import")
    }

    /// The validity gpg gives `fingerprint` in `person`'s keyring (the second field of its `pub` line).
    static func validity(_ fingerprint: String, for person: Person) throws -> String {
        let listing = try person.tool(["gpg", "--batch", "--with-colons", "--list-keys", fingerprint])
            .outputText
        let pub = listing.split(separator: "\n").first { $0.hasPrefix("pub:") } ?? ""
        return String(pub.split(separator: ":", omittingEmptySubsequences: false).dropFirst().first ?? "")
    }

    /// Stops both agents.
    func stop() {
        alice.stopAgent()
        mallory.stopAgent()
    }
}

@Suite("a shared store that no pusher can subvert")
struct SharedStoreTests {
    @Test("a merge with a side encrypted to a key Alice does not know stops, saying so, nothing changed")
    func mergeWithUnknownReader() throws {
        let team = try Team()
        defer { team.stop() }
        let eve = try Team.makeKey(team.mallory, "Eve <eve@coffer.test>")
        try Team.give(team.aliceKey, from: team.alice, to: team.mallory)
        try team.check(["insert", "-m", "-f", "shared/wifi"], input: "wifi\nlocal: alice\n")
        try team.malloryPushes("routine") { clone in
            let encrypted = try team.mallory.tool(
                [
                    "sh", "-c",
                    "printf 'wifi\\nremote: mallory\\n' | gpg --batch --yes --trust-model always -e "
                        + "-r \(team.aliceKey) -r \(team.malloryKey) -r \(eve) -o '\(clone)/shared/wifi.gpg'",
                ])
            try encrypted.succeeded("gpg -e")
        }
        let head = try team.head()
        let synced = try team.run(["sync"])
        #expect(synced.status == 1, "\(synced.outputText)")
        #expect(synced.errorText.contains("does not know"), "\(synced.errorText)")
        #expect(!synced.errorText.contains("none of the recipients"), "\(synced.errorText)")
        #expect(try team.head() == head)
        #expect(try team.uncommitted() == "")
        #expect(try team.decrypted(team.store + "/shared/wifi.gpg", by: team.alice) == "wifi\nlocal: alice\n")
    }

    @Test("a key a pusher names in .gpg-id and .public-keys is data: writes refuse it, as pass refuses it")
    func pushedKeyIsNotTrusted() throws {
        let team = try Team()
        defer { team.stop() }
        let eve = try Team.makeKey(team.mallory, "Eve <eve@coffer.test>")
        let commit = try team.malloryPushes("routine") { clone in
            try Team.export(eve, from: team.mallory).write(toFile: clone + "/.public-keys/" + eve)
            try "\(team.aliceKey)\n\(eve)\n".write(toFile: clone + "/.gpg-id")
        }
        let synced = try team.check(["sync"])
        #expect(
            synced.outputText.contains("Recipients of the store changed by commit \(commit)"),
            "\(synced.outputText)")
        #expect(synced.outputText.contains("not accepted on this clone: \(eve)"))
        #expect(!synced.outputText.contains("Already up to date"))
        // Imported, never certified.
        #expect(try team.alice.tool(["gpg", "--batch", "--list-keys", eve]).status == 0)
        #expect(!["f", "u", "m"].contains(try Team.validity(eve, for: team.alice)))

        let head = try team.head()
        let refused = try team.run(["insert", "-m", "web/new"], input: "new secret\n")
        #expect(refused.status == 1)
        let lines = refused.errorText.split(separator: "\n")
        #expect(lines.count == 1, "\(refused.errorText)")
        for part in [
            eve, "\"Eve <eve@coffer.test>\"", "commit \(commit)", "Mallory", "pass recipients accept",
        ] {
            #expect(refused.errorText.contains(part), "\(part): \(refused.errorText)")
        }
        #expect(!FileSystem.exists(team.store + "/web/new.gpg"))
        #expect(try team.head() == head)
        #expect(try team.uncommitted().isEmpty)
        // Debian's pass refuses the key too (gpg has no reason to trust it).
        let pass = try team.alice.tool(["/usr/bin/pass", "insert", "-m", "web/by-pass"], input: "x\n")
        #expect(pass.status != 0)
        #expect(!FileSystem.exists(team.store + "/web/by-pass.gpg"))

        // A .gpg-id naming the pusher's key alone is refused the same way, with the other commands that
        // encrypt: generate, mv into the folder, cp, edit.
        try team.malloryPushes("only me") { clone in try "\(eve)\n".write(toFile: clone + "/.gpg-id") }
        try team.check(["sync"])
        for (arguments, input) in [
            (["insert", "-m", "-f", "web/site"], "changed\n"), (["generate", "web/generated"], ""),
            (["cp", "private/diary", "web/diary"], ""), (["generate", "-i", "web/site"], ""),
        ] {
            let output = try team.run(arguments, input: input)
            #expect(output.status == 1, "\(arguments): \(output.outputText)")
            #expect(output.errorText.contains(eve), "\(arguments): \(output.errorText)")
        }
        #expect(try team.decrypted(team.store + "/web/site.gpg", by: team.alice) == "site password\n")
        #expect(!FileSystem.exists(team.store + "/web/generated.gpg"))
        #expect(!FileSystem.exists(team.store + "/web/diary.gpg"))
        #expect(try team.uncommitted().isEmpty)
    }

    @Test("accepting a pushed key is the user's act: it certifies that key's user id and re-encrypts")
    func acceptingIsExplicit() throws {
        let team = try Team()
        defer { team.stop() }
        try team.malloryPushes("me at the top") { clone in
            try "\(team.aliceKey)\n\(team.malloryKey)\n".write(toFile: clone + "/.gpg-id")
        }
        try team.check(["sync"])
        // Mallory's key is valid for gpg (Alice added her to shared/), so pass would encrypt to it; coffer
        // does not, for the store's root.
        let refused = try team.run(["insert", "-m", "web/new"], input: "new\n")
        #expect(refused.status == 1 && refused.errorText.contains(team.malloryKey))
        let listed = try team.check(["recipients"]).outputText
        #expect(
            listed.contains("not accepted on this clone: pass recipients accept \(team.malloryKey)"),
            "\(listed)")
        let accepted = try team.check(["recipients", "accept", team.malloryKey])
        #expect(accepted.outputText.contains("added by commit"), "\(accepted.outputText)")
        #expect(accepted.outputText.contains("re-encrypted"))
        try team.check(["insert", "-m", "web/new"], input: "new\n")
        #expect(try team.decrypted(team.store + "/web/new.gpg", by: team.mallory) == "new\n")
        // What the pusher's change left unreadable for her, the acceptance re-encrypted.
        #expect(try team.decrypted(team.store + "/web/site.gpg", by: team.mallory) == "site password\n")
        // Folders with their own .gpg-id keep theirs.
        #expect(try team.decrypted(team.store + "/private/diary.gpg", by: team.mallory) == nil)
        #expect(try team.uncommitted().isEmpty)
    }

    @Test(
        "sync does not re-encrypt a rotated password for a folder an incoming rename moved it into",
        arguments: [false, true])
    func incomingRenameDoesNotWiden(signing: Bool) throws {
        let team = try Team(signing: signing)
        defer { team.stop() }
        try team.check(["insert", "-m", "-f", "private/diary"], input: "diary v2, rotated\n")
        try team.malloryPushes("tidy up") { clone in
            try team.mallory.tool(["git", "-C", clone, "mv", "private/diary.gpg", "shared/diary.gpg"])
                .succeeded("git mv")
        }
        let synced = try team.check(["sync"])
        #expect(
            synced.errorText.contains("Left shared/diary encrypted for its earlier recipients"),
            "\(synced.errorText)")
        let file = team.store + "/shared/diary.gpg"
        #expect(try team.decrypted(file, by: team.alice) == "diary v2, rotated\n")
        #expect(try team.decrypted(file, by: team.mallory) == nil)
        // What was pushed: no version of the rotated value Mallory can read.
        try team.mallory.tool(["git", "-C", team.malloryClone, "pull", "-q", "--rebase"]).succeeded("pull")
        #expect(try team.decrypted(team.malloryClone + "/shared/diary.gpg", by: team.mallory) == nil)
        #expect(try team.uncommitted().isEmpty)

        // Later changes to shared/'s recipients re-encrypt its entries, but the clone remembers where the
        // diary was written: adding Carol to shared/, accepting a key there, fsck and another sync leave it
        // narrow.
        let carolPerson = try TeamSetupTests.Person(team.installed, "carol")
        defer { carolPerson.stopAgent() }
        let carol = try Team.makeKey(carolPerson, "Carol <carol@coffer.test>")
        try Team.give(carol, from: carolPerson, to: team.alice)
        let added = try team.check(["recipients", "add", "-p", "shared", carol])
        #expect(added.errorText.contains("Left shared/diary encrypted"), "\(added.errorText)")
        #expect(try team.decrypted(team.store + "/shared/wifi.gpg", by: carolPerson) == "wifi\n")
        _ = try team.run(["fsck", "--fix"])
        try team.check(["sync"])
        #expect(try team.decrypted(file, by: team.mallory) == nil)
        #expect(try team.decrypted(file, by: carolPerson) == nil)
        #expect(try team.decrypted(file, by: team.alice) == "diary v2, rotated\n")
    }

    @Test(
        "changing an entry a pusher moved into a wider folder (otp, a field, edit, generate -i) keeps it narrow",
        arguments: [false, true])
    func rewriteOfMovedEntryDoesNotWiden(forged: Bool) throws {
        let uri = "otpauth://hotp/Diary:alice?secret=JBSWY3DPEHPK3PXP&counter=0"
        let changes: [(String, [String], [String: String])] = [
            ("otp", ["otp", "shared/diary"], [:]),
            ("field", ["insert", "--field", "note=new", "shared/diary"], [:]),
            ("edit", ["edit", "shared/diary"], ["EDITOR": "sed -i s/counter=0/counter=9/"]),
            ("generate -i", ["generate", "-i", "shared/diary", "12"], [:]),
        ]
        for (what, arguments, environment) in changes {
            let team = try Team()
            defer { team.stop() }
            try team.check(["insert", "-m", "-f", "private/diary"], input: "diary v2, rotated\n\(uri)\n")
            try team.check(["sync"])
            // Forged: a session key packet naming Mallory's subkey in front, so that the key ids name every
            // key shared/ names (red team: the rewrite took them at their word).
            let subkey = forged ? try Team.encryptionSubkeyID(team.malloryKey, of: team.mallory) : ""
            try team.malloryPushes("tidy up") { clone in
                try team.mallory.tool(["git", "-C", clone, "mv", "private/diary.gpg", "shared/diary.gpg"])
                    .succeeded("git mv")
                if forged {
                    let file = clone + "/shared/diary.gpg"
                    try TestFiles.write(Self.forgedKeyID(try FileSystem.readFile(file), subkey), to: file)
                }
            }
            try team.check(["sync"])
            let changed = try team.run(arguments, environment: environment)
            #expect(changed.status == 0, "\(what): \(changed.errorText)")
            try team.check(["sync"])
            let file = team.store + "/shared/diary.gpg"
            #expect(try team.decrypted(file, by: team.alice) != nil, "\(what)")
            #expect(try team.decrypted(file, by: team.mallory) == nil, "\(what): Mallory reads it")
            let harvested = try Self.everyPlaintext(team, readableBy: team.mallory)
            #expect(!harvested.contains { $0.contains("JBSWY3DPEHPK3PXP") }, "\(what): \(harvested)")
            #expect(try team.uncommitted().isEmpty, "\(what)")
        }
    }

    @Test(
        "a deleted subfolder .gpg-id does not hand the folder to the parent's recipients",
        arguments: [false, true])
    func deletedGPGIDDoesNotWiden(signing: Bool) throws {
        let team = try Team(signing: signing)
        defer { team.stop() }
        try team.check(["insert", "-m", "-f", "shared/board/minutes"], input: "minutes v2\n")
        let commit = try team.malloryPushes("simplify") { clone in
            unlink(clone + "/shared/board/.gpg-id")
            unlink(clone + "/shared/board/.gpg-id.sig")
        }
        let synced = try team.check(["sync"])
        #expect(
            synced.outputText.contains("shared/board/.gpg-id removed by commit \(commit)"),
            "\(synced.outputText)")
        let file = team.store + "/shared/board/minutes.gpg"
        #expect(try team.decrypted(file, by: team.alice) == "minutes v2\n")
        #expect(try team.decrypted(file, by: team.mallory) == nil)
        let refused = try team.run(["insert", "-m", "shared/board/agenda"], input: "agenda\n")
        #expect(refused.status == 1, "\(refused.outputText)")
        #expect(
            refused.errorText.contains("shared/board/.gpg-id is gone (removed by commit \(commit)"),
            "\(refused.errorText)")
        #expect(!FileSystem.exists(team.store + "/shared/board/agenda.gpg"))
        // fsck finds the folder's entries narrow and --fix leaves them so.
        let fixed = try team.run(["fsck", "--fix"])
        #expect(fixed.status == 1)
        #expect(fixed.outputText.contains("shared/board/minutes.gpg"), "\(fixed.outputText)")
        #expect(try team.decrypted(file, by: team.mallory) == nil)
    }

    @Test("fsck --fix widens a copied ciphertext only when the user says yes on a terminal")
    func fsckDoesNotWiden() throws {
        let team = try Team()
        defer { team.stop() }
        try team.malloryPushes("backup") { clone in
            try TestFiles.write(
                try FileSystem.readFile(clone + "/private/diary.gpg"), to: clone + "/shared/copy.gpg")
        }
        try team.check(["sync"])
        let file = team.store + "/shared/copy.gpg"
        let before = try FileSystem.readFile(file)
        let head = try team.head()
        let fixed = try team.run(["fsck", "--fix"])
        #expect(fixed.status == 1)
        #expect(fixed.outputText.contains("shared/copy.gpg"), "\(fixed.outputText)")
        #expect(fixed.outputText.contains("not fixed"))
        #expect(fixed.outputText.contains(team.malloryKey))
        #expect(try FileSystem.readFile(file) == before)
        #expect(try team.head() == head)

        // On a terminal, no keeps it; yes widens it and commits.
        func fsckOnTerminal(answer: String) throws -> ChildProcess.Output {
            var environment = team.installed.environment
            for (name, value) in team.alice.environment { environment[name] = value }
            return try team.installed.sandbox.run(
                ["script", "-qec", "'\(team.installed.program)' fsck --fix", "/dev/null"],
                input: Array((answer + "\n").utf8), environment: environment)
        }
        let no = try fsckOnTerminal(answer: "n")
        #expect(no.outputText.contains("read shared/copy"), "\(no.outputText)")
        #expect(no.outputText.contains("was written in private before it came here"), "\(no.outputText)")
        #expect(no.outputText.contains("was not written for its folder"), "\(no.outputText)")
        #expect(try FileSystem.readFile(file) == before)
        _ = try fsckOnTerminal(answer: "y")
        #expect(try team.decrypted(file, by: team.mallory) == "diary v1\n")
        #expect(try team.uncommitted().isEmpty)
    }

    @Test("recipients add certifies only the named user id; a line two keys answer to is an error")
    func spoofedUserID() throws {
        let team = try Team()
        defer { team.stop() }
        let carolPerson = try TeamSetupTests.Person(team.installed, "carol")
        defer { carolPerson.stopAgent() }
        let carol = try Team.makeKey(carolPerson, "Carol <carol@coffer.test>")
        try Team.give(carol, from: carolPerson, to: team.alice)
        try team.alice.tool(["gpg", "--batch", "--yes", "--quick-lsign-key", carol]).succeeded("lsign")
        try team.check(["init", "-p", "team", team.aliceKey, "carol@coffer.test"])
        try team.check(["insert", "-m", "team/plan"], input: "plan\n")

        // Mallory's key gains a user id that claims to be Carol, and the kept key file carries it.
        try team.mallory.tool([
            "gpg", "--batch", "--passphrase", "", "--quick-add-uid", team.malloryKey,
            "Carol <carol@coffer.test>",
        ]).succeeded("add uid")
        try team.malloryPushes("refresh my key") { clone in
            try Team.export(team.malloryKey, from: team.mallory).write(
                toFile: clone + "/.public-keys/" + team.malloryKey)
        }
        let synced = try team.check(["sync"])
        #expect(
            synced.outputText.contains("Public key .public-keys/\(team.malloryKey) changed"),
            "\(synced.outputText)")
        // Only the user id Alice accepted is certified: the claimed one is not valid for gpg.
        let uids = try team.alice.tool(["gpg", "--batch", "--with-colons", "--list-keys", team.malloryKey])
            .outputText
            .split(separator: "\n").filter { $0.hasPrefix("uid:") }
        #expect(
            uids.contains { $0.contains("Mallory <mallory@coffer.test>") && $0.hasPrefix("uid:f:") },
            "\(uids)")
        #expect(
            uids.contains { $0.contains("Carol <carol@coffer.test>") && !$0.hasPrefix("uid:f:") }, "\(uids)")

        let listed = try team.run(["recipients", "-p", "team"])
        #expect(listed.status == 1 && listed.errorText.contains("matches 2 keys"), "\(listed.errorText)")
        let refused = try team.run(["insert", "-m", "-f", "team/plan"], input: "plan v2\n")
        #expect(refused.status == 1 && refused.errorText.contains("matches 2 keys"), "\(refused.errorText)")
        #expect(try team.decrypted(team.store + "/team/plan.gpg", by: team.alice) == "plan\n")
        let checked = try team.run(["fsck"])
        #expect(checked.status == 1 && checked.outputText.contains("matches 2 keys"), "\(checked.outputText)")

        // Without Carol's own key, the line finds Mallory's alone, which is not accepted for team/.
        try team.alice.tool(["gpg", "--batch", "--yes", "--delete-keys", carol]).succeeded("delete carol")
        let alone = try team.run(["insert", "-m", "-f", "team/plan"], input: "plan v3\n")
        #expect(alone.status == 1, "\(alone.outputText)")
        #expect(try team.decrypted(team.store + "/team/plan.gpg", by: team.mallory) == nil)
    }

    @Test("a .gpg-id signed by a key the user trusts to sign them is accepted as it arrives; others are not")
    func trustedSignerIsAccepted() throws {
        let team = try Team()
        defer { team.stop() }
        let bobPerson = try TeamSetupTests.Person(team.installed, "bob")
        defer { bobPerson.stopAgent() }
        let bob = try Team.makeKey(bobPerson, "Bob <bob@coffer.test>")
        let lead = try Team.makeKey(team.mallory, "Lead <lead@coffer.test>")
        try Team.give(lead, from: team.mallory, to: team.alice)
        _ = try team.alice.tool(["git", "-C", team.store, "config", "coffer.trustedsigners", lead])
        // The lead adds Bob to shared/ in a commit the lead signs; Bob's key comes in .public-keys.
        try team.malloryPushes("add bob", signedBy: lead) { clone in
            try Team.export(bob, from: bobPerson).write(toFile: clone + "/.public-keys/" + bob)
            try "\(team.aliceKey)\n\(team.malloryKey)\n\(bob)\n".write(toFile: clone + "/shared/.gpg-id")
            try team.mallory.tool([
                "gpg", "--batch", "--yes", "--local-user", lead, "--detach-sign", "-o",
                clone + "/shared/.gpg-id.sig",
                clone + "/shared/.gpg-id",
            ]).succeeded("sign")
        }
        let synced = try team.check(["sync"])
        #expect(!synced.outputText.contains("not accepted on this clone"), "\(synced.outputText)")
        try team.check(["insert", "-m", "shared/for-bob"], input: "for bob\n")
        #expect(try team.decrypted(team.store + "/shared/for-bob.gpg", by: bobPerson) == "for bob\n")
        // The lead's signed .gpg-id copied into private/ in Mallory's own commit is not the lead's change.
        try team.malloryPushes("copy") { clone in
            for name in [".gpg-id", ".gpg-id.sig"] {
                try TestFiles.write(
                    try FileSystem.readFile(clone + "/shared/" + name), to: clone + "/private/" + name)
            }
        }
        let copied = try team.check(["sync"])
        #expect(copied.outputText.contains("not accepted on this clone"), "\(copied.outputText)")
        #expect(try team.run(["insert", "-m", "private/for-bob"], input: "x\n").status == 1)
        // The same change signed by Mallory's own key, whom Alice does not trust to sign, is not accepted.
        let eve = try Team.makeKey(team.mallory, "Eve <eve@coffer.test>")
        try team.malloryPushes("add eve", signedBy: team.malloryKey) { clone in
            try Team.export(eve, from: team.mallory).write(toFile: clone + "/.public-keys/" + eve)
            try "\(team.aliceKey)\n\(team.malloryKey)\n\(bob)\n\(eve)\n".write(
                toFile: clone + "/shared/.gpg-id")
            try team.mallory.tool([
                "gpg", "--batch", "--yes", "--local-user", team.malloryKey, "--detach-sign", "-o",
                clone + "/shared/.gpg-id.sig", clone + "/shared/.gpg-id",
            ]).succeeded("sign")
        }
        let second = try team.check(["sync"])
        #expect(second.outputText.contains("not accepted on this clone: \(eve)"), "\(second.outputText)")
        let refused = try team.run(["insert", "-m", "shared/for-eve"], input: "not for eve\n")
        #expect(refused.status == 1 && refused.errorText.contains(eve), "\(refused.errorText)")
    }

    /// Red team (pusher): a pushed link `shared/dir -> ../private` let insert, edit and generate write into
    /// private/ (git add then failed, leaving files uncommitted), and mv through it exit 0 leaving its
    /// removal uncommitted.
    @Test("writes, mv and cp through a pushed link to a folder are refused and leave nothing behind")
    func pushedFolderLink() throws {
        let team = try Team()
        defer { team.stop() }
        try team.check(["insert", "-m", "-f", "private/diary"], input: "diary\n")
        try team.check(["sync"])
        try team.malloryPushes("shortcut") { clone in
            #expect(symlink("../private", clone + "/shared/dir") == 0)
        }
        try team.check(["sync"])
        let attempts: [[String]] = [
            ["insert", "-m", "shared/dir/new"], ["insert", "-m", "-f", "shared/dir/diary"],
            ["generate", "shared/dir/made", "12"], ["mv", "shared/dir/diary", "shared/moved"],
            ["cp", "shared/dir/diary", "shared/copied"], ["insert", "--field", "note=x", "shared/dir/diary"],
        ]
        for arguments in attempts {
            let refused = try team.run(arguments, input: "x\n")
            #expect(refused.status == 1, "\(arguments): \(refused.errorText)")
            #expect(refused.errorText.contains("link to a folder"), "\(arguments): \(refused.errorText)")
            #expect(try team.uncommitted().isEmpty, "\(arguments)")
        }
        #expect(try team.decrypted(team.store + "/private/diary.gpg", by: team.alice) == "diary\n")
        #expect(!TestFiles.exists(team.store + "/shared/moved.gpg"))
        #expect(!TestFiles.exists(team.store + "/private/new.gpg"))
    }

    /// Red team (pusher): git's simplification followed a merge to the side its `.gpg-id` came from (and
    /// then the first parents did), so a commit the trusted signer made elsewhere, grafted in as either
    /// parent of a merge, counted as the signer's change of this store's file.
    @Test(
        "a commit the trusted signer signed elsewhere, grafted in by a merge, vouches for nothing",
        arguments: ["second", "first"])
    func graftedSignedCommitIsNotTheSigners(parent: String) throws {
        let team = try Team()
        defer { team.stop() }
        let lead = try Team.makeKey(team.mallory, "Lead <lead@coffer.test>")
        try Team.give(lead, from: team.mallory, to: team.alice)
        _ = try team.alice.tool(["git", "-C", team.store, "config", "coffer.trustedsigners", lead])
        // In another repository, the lead signs a private/.gpg-id that names Mallory; Mallory's merge takes
        // that commit as its second parent and its file as the merge's.
        let elsewhere = team.mallory.home + "/elsewhere"
        let script = """
            set -e
            git init -q "$1" && mkdir -p "$1/private" && printf '%s\\n%s\\n' "$2" "$3" > "$1/private/.gpg-id"
            git -C "$1" add -A
            git -C "$1" -c user.name=Lead -c user.email=lead@coffer.test commit -q --gpg-sign="$4" -m recipients
            cd "$5" && git pull -q --rebase && git fetch -q "$1" HEAD
            signed=$(git rev-parse FETCH_HEAD)
            git read-tree HEAD
            git update-index --cacheinfo 100644,$(git rev-parse "$signed:private/.gpg-id"),private/.gpg-id
            if [ "$6" = first ]; then parents="-p $signed -p HEAD"; else parents="-p HEAD -p $signed"; fi
            merge=$(git -c user.name=Mallory -c user.email=mallory@coffer.test commit-tree "$(git write-tree)" \\
                $parents -m Merge)
            git reset -q --hard "$merge" && git push -q
            """
        try team.mallory.tool(
            [
                "sh", "-c", script, "sh", elsewhere, team.aliceKey, team.malloryKey, lead, team.malloryClone,
                parent,
            ]
        ).succeeded("grafted merge")
        let synced = try team.check(["sync"])
        #expect(synced.outputText.contains("not accepted on this clone"), "\(synced.outputText)")
        let refused = try team.run(["insert", "-m", "private/new"], input: "not for mallory\n")
        #expect(refused.status == 1, "\(refused.errorText)")
        #expect(!TestFiles.exists(team.store + "/private/new.gpg"))
    }

    @Test("a clone that signs its commits never signs a recipient it has not accepted")
    func signedMergeVouchesForNothing() throws {
        let team = try Team()
        defer { team.stop() }
        for (name, value) in [("pass.signcommits", "true"), ("user.signingkey", team.aliceKey)] {
            try team.alice.tool(["git", "-C", team.store, "config", name, value]).succeeded("git config")
        }
        let carolPerson = try TeamSetupTests.Person(team.installed, "carol")
        defer { carolPerson.stopAgent() }
        let carol = try Team.makeKey(carolPerson, "Carol <carol@coffer.test>")
        try Team.give(carol, from: carolPerson, to: team.alice)
        // Alice adds Carol to shared/ (a signed commit); meanwhile Mallory adds Eve there.
        try team.check(["recipients", "add", "-p", "shared", carol])
        let eve = try Team.makeKey(team.mallory, "Eve <eve@coffer.test>")
        let pushed = try team.malloryPushes("add eve") { clone in
            try Team.export(eve, from: team.mallory).write(toFile: clone + "/.public-keys/" + eve)
            try "\(team.aliceKey)\n\(team.malloryKey)\n\(eve)\n".write(toFile: clone + "/shared/.gpg-id")
        }
        let head = try team.head()
        // Replaying Alice's commit merges both .gpg-id changes: that signed commit would name Eve.
        let stopped = try team.run(["sync"])
        #expect(stopped.status == 1, "\(stopped.outputText)")
        #expect(
            stopped.errorText.contains(eve) && stopped.errorText.contains("recipients accept"),
            "\(stopped.errorText)")
        #expect(try team.head() == head)
        #expect(try team.uncommitted().isEmpty)
        let remoteHead = try team.mallory.tool([
            "git", "--git-dir", team.remote, "rev-parse", "--short", "main",
        ])
        #expect(remoteHead.outputText == pushed)
        // In merge mode the merge commit would name her: refused the same way.
        try team.alice.tool(["git", "-C", team.store, "config", "coffer.syncmode", "merge"]).succeeded(
            "config")
        let merged = try team.run(["sync"])
        #expect(merged.status == 1 && merged.errorText.contains(eve), "\(merged.errorText)")
        #expect(try team.head() == head)
        #expect(try team.uncommitted().isEmpty)
        // Unsigned, the merge keeps both additions (Eve's line too, though no key here answered to it
        // when it merged), and writes there wait for Alice to accept Eve.
        try team.alice.tool(["git", "-C", team.store, "config", "pass.signcommits", "false"]).succeeded(
            "config")
        try team.check(["sync"])
        let lines = try String(decoding: FileSystem.readFile(team.store + "/shared/.gpg-id"), as: UTF8.self)
            .split(separator: "\n")
        #expect(
            Set(lines) == [
                Substring(team.aliceKey), Substring(team.malloryKey), Substring(carol), Substring(eve),
            ])
        let refused = try team.run(["insert", "-m", "shared/after"], input: "after\n")
        #expect(refused.status == 1 && refused.errorText.contains("recipients accept -p shared \(eve)"))
    }

    @Test("a folder link a pusher adds does not carry writes into a wider folder")
    func pushedFolderLinkIsNoWayIn() throws {
        let team = try Team()
        defer { team.stop() }
        try team.malloryPushes("shortcut") { clone in
            guard symlink("../shared", clone + "/private/notes") == 0 else { throw SandboxError("symlink") }
        }
        _ = try team.run(["sync"])
        let written = try team.run(["insert", "-m", "private/notes/pin"], input: "1234\n")
        #expect(written.status == 1, "\(written.outputText)")
        #expect(written.errorText.split(separator: "\n").count == 1, "\(written.errorText)")
        #expect(!FileSystem.exists(team.store + "/shared/pin.gpg"))
        let harvested = try Self.everyPlaintext(team, readableBy: team.mallory)
        #expect(!harvested.contains("1234\n"))
        #expect(try team.uncommitted().isEmpty)
    }

    @Test("a link a pusher adds in a folder Alice renamed stays a link through her merge by hand")
    func pushedLinkMovedByDirectoryRename() throws {
        let team = try Team()
        defer { team.stop() }
        // Alice renames web/ and has not pushed; Mallory adds a link in the old folder.
        try team.alice.tool(["git", "-C", team.store, "mv", "web", "site"]).succeeded("git mv")
        try team.alice.tool(["git", "-C", team.store, "commit", "-q", "-m", "rename"]).succeeded("git commit")
        try team.malloryPushes("shortcut") { clone in
            guard symlink("../shared/wifi.gpg", clone + "/web/link.gpg") == 0 else {
                throw SandboxError("symlink")
            }
        }
        // The clone's config (coffer's) merges without directory rename detection, as sync does; with it
        // on (a person's own setting), the link is left to Alice at site/link.gpg.
        try team.alice.tool(["git", "-C", team.store, "fetch", "-q"]).succeeded("git fetch")
        #expect(
            try team.alice.tool(["git", "-C", team.store, "config", "merge.directoryRenames"]).outputText
                == "false")
        let merged = try team.alice.tool([
            "git", "-C", team.store, "-c", "merge.renames=true", "-c", "merge.directoryRenames=conflict",
            "merge",
            "--no-edit", "origin/main",
        ])
        #expect(merged.status != 0, "\(merged.outputText)")
        try team.check(["sync"])
        #expect(
            FileSystem.kind(team.store + "/site/link.gpg") == .symlink, "a link, not its target as a file")
        let target = try team.alice.tool(["readlink", team.store + "/site/link.gpg"]).outputText
        #expect(target == "../shared/wifi.gpg")
        #expect(try team.uncommitted().isEmpty)
        let mode = try team.alice.tool(["git", "-C", team.store, "ls-files", "-s", "site/link.gpg"])
            .outputText
        #expect(mode.hasPrefix("120000 "), "\(mode)")
    }

    @Test("a fresh clone accepts the recipients it finds once, and says so")
    func cloneNamesWhatItAccepts() throws {
        let team = try Team()
        defer { team.stop() }
        let bobPerson = try TeamSetupTests.Person(team.installed, "bob")
        defer { bobPerson.stopAgent() }
        try Team.give(team.aliceKey, from: team.alice, to: bobPerson)
        try Team.give(team.malloryKey, from: team.mallory, to: bobPerson)
        _ = try Team.makeKey(bobPerson, "Bob <bob@coffer.test>")
        let cloned = try bobPerson.check(["clone", "file://" + team.remote])
        #expect(cloned.errorText.contains("Accepted the recipients of the store"), "\(cloned.errorText)")
        #expect(cloned.errorText.contains(team.aliceKey))
        #expect(cloned.errorText.contains("Accepted the recipients of shared"))
        #expect(cloned.errorText.contains(team.malloryKey))
        #expect(TestFiles.exists(bobPerson.store + "/.git/coffer-accepted"))
        // A change after that is not accepted by the clone.
        try team.malloryPushes("me too") { clone in
            try "\(team.aliceKey)\n\(team.malloryKey)\n".write(toFile: clone + "/.gpg-id")
        }
        let synced = try bobPerson.check(["sync"])
        #expect(
            synced.outputText.contains("not accepted on this clone: \(team.malloryKey)"),
            "\(synced.outputText)")
    }

    @Test(
        "accept takes only a key the folder's .gpg-id names; a repository inside the store inherits the records"
    )
    func acceptanceHasNoBackDoors() throws {
        let team = try Team()
        defer { team.stop() }
        let eve = try Team.makeKey(team.mallory, "Eve <eve@coffer.test>")
        try Team.give(eve, from: team.mallory, to: team.alice)
        // Accepting a key nobody named yet would let a later push add it unseen.
        let early = try team.run(["recipients", "accept", eve])
        #expect(early.status == 1 && early.errorText.contains("not named"), "\(early.errorText)")
        try team.malloryPushes("add eve") { clone in
            try "\(team.aliceKey)\n\(eve)\n".write(toFile: clone + "/.gpg-id")
        }
        try team.check(["sync"])
        #expect(try team.run(["insert", "-m", "web/x"], input: "x\n").status == 1)

        // shared/ becomes a repository of its own (cloned there by hand, say) and its .gpg-id names Eve:
        // the new repository starts from what Alice accepted for shared/, not from its .gpg-id.
        try "\(team.aliceKey)\n\(team.malloryKey)\n\(eve)\n".write(toFile: team.store + "/shared/.gpg-id")
        try team.alice.tool(["git", "-C", team.store + "/shared", "init", "-q"]).succeeded("git init")
        let refused = try team.run(["insert", "-m", "shared/nested"], input: "nested\n")
        #expect(refused.status == 1 && refused.errorText.contains(eve), "\(refused.errorText)")
        #expect(!FileSystem.exists(team.store + "/shared/nested.gpg"))
    }

    /// Where the OpenPGP packet that starts at `offset` of `bytes` ends, and where its body starts.
    static func packet(_ bytes: [UInt8], at offset: Int) -> (body: Int, end: Int) {
        let tag = bytes[offset]
        if tag & 0x40 != 0 {
            let first = Int(bytes[offset + 1])
            if first < 192 { return (offset + 2, offset + 2 + first) }
            if first < 224 {
                return (offset + 3, offset + 3 + ((first - 192) << 8) + Int(bytes[offset + 2]) + 192)
            }
            return (
                offset + 6, offset + 6 + bytes[(offset + 2)..<(offset + 6)].reduce(0) { $0 << 8 | Int($1) }
            )
        }
        let size = [1, 2, 4][Int(tag & 3)]
        let body = offset + 1 + size
        return (body, body + bytes[(offset + 1)..<body].reduce(0) { $0 << 8 | Int($1) })
    }

    /// The ciphertext `bytes` with its first two packets (two session key packets) swapped: what anyone
    /// can make without a key, and decrypts as before.
    static func rewrapped(_ bytes: [UInt8]) -> [UInt8] {
        let first = packet(bytes, at: 0).end
        let second = packet(bytes, at: first).end
        return Array(bytes[first..<second] + bytes[0..<first] + bytes[second...])
    }

    /// The ciphertext `bytes` inside a compressed data packet that does not compress (algorithm 0): gpg
    /// reads it as it reads `bytes`.
    static func compressedWrapping(_ bytes: [UInt8]) -> [UInt8] {
        let length = UInt32(bytes.count + 1)
        return [0xC8, 0xFF] + (0..<4).map { UInt8(truncatingIfNeeded: length >> (24 - 8 * $0)) } + [0] + bytes
    }

    /// The ciphertext `bytes` with a copy of its first session key packet in front, that copy naming
    /// `keyID` (16 hex digits): a key id anyone can add, for a key that cannot open the message.
    static func forgedKeyID(_ bytes: [UInt8], _ keyID: String) -> [UInt8] {
        let first = packet(bytes, at: 0)
        var forged = Array(bytes[0..<first.end])
        let digits = Array(keyID.utf8)
        let id = stride(from: 0, to: digits.count, by: 2).map {
            UInt8(String(decoding: digits[$0..<($0 + 2)], as: UTF8.self), radix: 16) ?? 0
        }
        // Version 3, then the key id.
        forged.replaceSubrange((first.body + 1)..<(first.body + 9), with: id)
        return forged + bytes
    }

    @Test(
        "a ciphertext from a narrower folder gains no reader in a wider one, however it arrives",
        arguments: [
            "rewrapped", "renamed later", "renamed twice", "upper-case .GPG", "merged in", "armored",
            "compressed", "deleted and added again", "forged key id", "merged elsewhere, forged",
        ])
    func foreignCiphertextGainsNoReader(how: String) throws {
        let team = try Team()
        defer { team.stop() }
        let carolPerson = try TeamSetupTests.Person(team.installed, "carol")
        defer { carolPerson.stopAgent() }
        let carol = try Team.makeKey(carolPerson, "Carol <carol@coffer.test>")
        try Team.give(carol, from: carolPerson, to: team.alice)
        let diary = { (clone: String) in try FileSystem.readFile(clone + "/private/diary.gpg") }
        switch how {
        case "rewrapped":
            // Alice and Bob could read private/diary; give it two readers so that swapping works.
            try team.check(["recipients", "add", "-p", "private", carol])
            try team.check(["sync"])
            try team.malloryPushes("add") { clone in
                try TestFiles.write(Self.rewrapped(try diary(clone)), to: clone + "/shared/diary.gpg")
            }
        case "renamed later":
            // Another clone of Alice's writes a private entry this clone never saw, and Mallory renames it
            // in a commit of her own: this clone gets both in one sync.
            let laptop = ["PASSWORD_STORE_DIR": team.alice.home + "/laptop"]
            try team.check(["clone", "file://" + team.remote], environment: laptop)
            try team.check(
                ["insert", "-m", "-f", "private/diary"], input: "diary v1 from the laptop\n",
                environment: laptop)
            try team.check(["sync"], environment: laptop)
            try team.malloryPushes("tidy") { clone in
                try team.mallory.tool(["git", "-C", clone, "mv", "private/diary.gpg", "shared/diary.gpg"])
                    .succeeded("mv")
            }
        case "renamed twice":
            // Over two syncs, by way of a name that is no entry.
            try team.malloryPushes("back up") { clone in
                try team.mallory.tool(["git", "-C", clone, "mv", "private/diary.gpg", "private/diary.bak"])
                    .succeeded("mv")
            }
            try team.check(["sync"])
            try team.malloryPushes("restore") { clone in
                try team.mallory.tool(["git", "-C", clone, "mv", "private/diary.bak", "shared/diary.gpg"])
                    .succeeded("mv")
            }
        case "upper-case .GPG":
            try team.malloryPushes("tidy") { clone in
                try team.mallory.tool(["git", "-C", clone, "mv", "private/diary.gpg", "shared/diary.GPG"])
                    .succeeded("mv")
            }
        case "armored":
            // The same message in ASCII armor, which gpg reads as well.
            let armor = try team.mallory.tool([
                "sh", "-c", "gpg --enarmor < \"$0\"", team.malloryClone + "/private/diary.gpg",
            ])
            .succeeded("gpg --enarmor").outputText
            let message = armor.replacing("ARMORED FILE", with: "MESSAGE").split(
                separator: "\n", omittingEmptySubsequences: false
            )
            .filter { !$0.hasPrefix("Comment:") }.joined(separator: "\n")
            try team.malloryPushes("add") { clone in
                try (message + "\n").write(toFile: clone + "/shared/diary.gpg")
            }
        case "compressed":
            try team.malloryPushes("add") { clone in
                try TestFiles.write(
                    Self.compressedWrapping(try diary(clone)), to: clone + "/shared/diary.gpg")
            }
        case "deleted and added again":
            // The entry goes in one sync and comes back in another folder in the next one.
            try team.malloryPushes("remove") { clone in
                try TestFiles.write(try diary(clone), to: team.mallory.home + "/kept.gpg")
                unlink(clone + "/private/diary.gpg")
            }
            try team.check(["sync"])
            try team.malloryPushes("restore") { clone in
                try TestFiles.write(
                    try FileSystem.readFile(team.mallory.home + "/kept.gpg"), to: clone + "/shared/diary.gpg")
            }
        case "forged key id":
            // In its own folder: a session key packet naming Mallory's subkey, and Mallory named in the
            // folder's .gpg-id. The key ids say Mallory reads it; she cannot.
            let subkey = try Team.encryptionSubkeyID(team.malloryKey, of: team.mallory)
            try team.malloryPushes("add") { clone in
                try TestFiles.write(
                    Self.forgedKeyID(try diary(clone), subkey), to: clone + "/private/diary.gpg")
                try "\(team.aliceKey)\n\(team.malloryKey)\n".write(toFile: clone + "/private/.gpg-id")
                try TestFiles.write(
                    Self.forgedKeyID(try diary(clone), subkey), to: clone + "/shared/diary.gpg")
            }
        case "merged elsewhere, forged":
            // Alice's laptop merges the diary changed on both her clones (a ciphertext written only in
            // that merge commit); Mallory copies it into shared/ with a key id of hers added.
            let laptop = ["PASSWORD_STORE_DIR": team.alice.home + "/laptop"]
            try team.check(["clone", "file://" + team.remote], environment: laptop)
            for environment in [[:], laptop] {
                try team.check(["git", "config", "coffer.syncmode", "merge"], environment: environment)
            }
            try team.check(["insert", "-m", "-f", "private/diary"], input: "diary v1\nlogin: desk\n")
            try team.check(["sync"])
            try team.check(
                ["insert", "-m", "-f", "private/diary"], input: "diary v1\nurl: lap\n", environment: laptop)
            try team.check(["sync"], environment: laptop)
            try team.check(["sync"])
            let subkey = try Team.encryptionSubkeyID(team.malloryKey, of: team.mallory)
            try team.malloryPushes("add") { clone in
                try TestFiles.write(
                    Self.forgedKeyID(try diary(clone), subkey), to: clone + "/shared/diary.gpg")
            }
        default:
            // Alice edits shared/wifi; Mallory makes private/diary's ciphertext the new shared/wifi.
            try team.check(["insert", "-m", "-f", "shared/wifi"], input: "wifi v2\n")
            try team.malloryPushes("update") { clone in
                try TestFiles.write(try diary(clone), to: clone + "/shared/wifi.gpg")
            }
        }
        _ = try team.run(["sync"])
        // Changes to the folders' recipients re-encrypt their entries: the diary's text gains no reader.
        _ = try team.run(["recipients", "add", "-p", "shared", carol])
        _ = try team.run(["recipients", "add", "-p", "private", carol])
        _ = try team.run(["fsck", "--fix"])
        _ = try team.run(["sync"])
        let harvested = try Self.everyPlaintext(team, readableBy: team.mallory)
        #expect(!harvested.contains { $0.contains("diary v1") }, "\(how): \(harvested)")
    }

    /// Every plaintext `person` can decrypt among the `.gpg` blobs of every commit of the shared remote.
    static func everyPlaintext(_ team: Team, readableBy person: Team.Person) throws -> [String] {
        let remote = team.remote
        let objects = try person.tool(["git", "--git-dir", remote, "rev-list", "--all", "--objects"])
            .outputText
        var found: [String] = []
        for line in objects.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[1].lowercased().hasSuffix(".gpg") else { continue }
            let blob = try person.tool(["git", "--git-dir", remote, "cat-file", "blob", String(parts[0])])
            let decrypted = try person.installed.sandbox.run(
                ["gpg", "--batch", "--quiet", "--decrypt"], input: blob.standardOutput,
                environment: person.installed.environment.merging(person.environment) { $1 })
            if decrypted.status == 0 {
                found.append(String(decoding: decrypted.standardOutput, as: UTF8.self))
            }
        }
        return found
    }

    @Test("names, user ids and subjects from the repository are quoted: no escape reaches the terminal")
    func repositoryTextIsQuoted() throws {
        let team = try Team()
        defer { team.stop() }
        try team.mallory.tool([
            "gpg", "--batch", "--passphrase", "", "--quick-add-uid", team.malloryKey,
            "Mal\u{1b}[2J\u{1b}]0;owned\u{07} <m@x>",
        ]).succeeded("add uid")
        // The primary one, whatever second the two were made in.
        try team.mallory.tool([
            "gpg", "--batch", "--quick-set-primary-uid", team.malloryKey,
            "Mal\u{1b}[2J\u{1b}]0;owned\u{07} <m@x>",
        ]).succeeded("primary uid")
        try team.malloryPushes("names") { clone in
            for name in [
                "shared/evil\u{1b}[31m", "shared/x\nPushed local changes.", "shared/bidi\u{202e}gpj.exe",
            ] {
                try TestFiles.write(
                    try FileSystem.readFile(clone + "/shared/wifi.gpg"), to: clone + "/" + name + ".gpg")
            }
            mkdir(clone + "/ev\u{1b}[1mil", 0o700)
            try "\(team.malloryKey)\n".write(toFile: clone + "/ev\u{1b}[1mil/.gpg-id")
            try Team.export(team.malloryKey, from: team.mallory).write(
                toFile: clone + "/.public-keys/" + team.malloryKey)
        }
        let synced = try team.check(["sync"])
        for output in [synced.outputText, synced.errorText] {
            #expect(!output.utf8.contains(0x1b), "\(output)")
            #expect(!output.contains("\u{202e}"))
        }
        #expect(
            !synced.outputText.split(separator: "\n").contains("Pushed local changes."),
            "\(synced.outputText)")
        #expect(
            synced.outputText.contains("Added \"shared/x\\nPushed local changes.\""), "\(synced.outputText)")
        for arguments in [["recipients", "-p", "shared"], ["fsck"], ["recipients", "-p", "ev\u{1b}[1mil"]] {
            let output = try team.run(arguments)
            #expect(
                !(output.outputText + output.errorText).utf8.contains(0x1b),
                "\(arguments): \(output.outputText)")
        }
        let listed = try team.check(["recipients", "-p", "shared"]).outputText
        #expect(listed.contains("\\033[2J"), "\(listed)")
    }
}

extension ChildProcess.Output {
    /// ``exitedZero(_:)`` for steps whose output is not needed.
    @discardableResult
    fileprivate func succeeded(_ command: String) throws -> Self { try exitedZero(command) }
}
