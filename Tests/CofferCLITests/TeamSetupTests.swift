import Coffer
import CofferTestSupport
import Testing

/// `setup` and `recipients` as a team uses them: people with fresh homes and no key, coffer installed
/// only as `pass` and run by absolute path with `PATH=/usr/bin:/bin`, one bare repository between them.
@Suite("setup and recipients")
struct TeamSetupTests {
    /// A person with a home and keyring of their own (empty until `setup` makes a key).
    struct Person {
        let installed: InstalledAsPass
        let home: String

        init(_ installed: InstalledAsPass, _ name: String) throws {
            self.installed = installed
            home = installed.sandbox.directory + "/" + name
            guard mkdir(home, 0o700) == 0, mkdir(home + "/.gnupg", 0o700) == 0 else {
                throw SandboxError("cannot make the home of \(name)")
            }
            try "[user]\n\tname = \(name)\n\temail = \(name)@coffer.test\n[init]\n\tdefaultBranch = main\n"
                .write(toFile: home + "/.gitconfig")
        }

        var store: String { home + "/.password-store" }

        var environment: [String: String] {
            ["HOME": home, "GNUPGHOME": home + "/.gnupg", "PASSWORD_STORE_DIR": store]
        }

        @discardableResult
        func run(_ arguments: [String], input: String = "") throws -> ChildProcess.Output {
            try installed.run(arguments, input: input, environment: environment)
        }

        @discardableResult
        func check(_ arguments: [String], input: String = "") throws -> ChildProcess.Output {
            try installed.check(arguments, input: input, environment: environment)
        }

        /// Runs another program (gpg, git, Debian's pass) as this person.
        func tool(_ arguments: [String], input: String = "") throws -> ChildProcess.Output {
            var environment = installed.environment
            for (name, value) in self.environment { environment[name] = value }
            return try installed.sandbox.run(arguments, input: Array(input.utf8), environment: environment)
        }

        /// The fingerprint of this person's only secret key.
        func fingerprint() throws -> String {
            let listing = try tool(["gpg", "--batch", "--with-colons", "--list-secret-keys"]).outputText
            let fingerprints = listing.split(separator: "\n").filter { $0.hasPrefix("fpr:") }
            guard let first = fingerprints.first else { throw SandboxError("no secret key") }
            return String(first.split(separator: ":", omittingEmptySubsequences: false)[9])
        }

        func head() throws -> String { try tool(["git", "-C", store, "rev-parse", "HEAD"]).outputText }

        func stopAgent() { _ = try? tool(["gpgconf", "--kill", "all"]) }
    }

    @Test("setup from nothing: a key, a store pass and gpg read, a remote; a second person joins by --clone")
    func setupAndJoin() throws {
        let installed = try InstalledAsPass(git: false)
        let remote = installed.sandbox.directory + "/remote.git"
        try installed.sandbox.check(["git", "init", "-q", "--bare", remote])
        let alice = try Person(installed, "alice")
        let bob = try Person(installed, "bob")
        defer {
            alice.stopAgent()
            bob.stopAgent()
        }

        // Without a key and without a terminal: one clear line saying what to run.
        let refused = try alice.run(["setup"])
        #expect(refused.status == 1)
        #expect(refused.errorText.contains("setup --name NAME --email EMAIL"))
        #expect(!FileSystem.exists(alice.store))

        let made = try alice.check([
            "setup", "--name", "Alice", "--email", "alice@coffer.test", "--no-passphrase", "--remote",
            "file://" + remote,
        ])
        let aliceKey = try alice.fingerprint()
        #expect(made.outputText.contains("Your key: \(aliceKey)"))
        #expect(
            try String(decoding: installed.sandbox.read(alice.store + "/.gpg-id"), as: UTF8.self) == aliceKey
                + "\n")
        let kept = try alice.tool([
            "gpg", "--batch", "--with-colons", "--show-keys", alice.store + "/.public-keys/" + aliceKey,
        ])
        #expect(kept.outputText.contains("fpr:::::::::\(aliceKey):"))
        #expect(try alice.tool(["git", "-C", alice.store, "status", "--porcelain"]).outputText.isEmpty)
        #expect(try alice.tool(["git", "--git-dir", remote, "rev-parse", "main"]).outputText == alice.head())

        // The store works for coffer, gpg and Debian's pass.
        try alice.check(["insert", "-m", "web/mail"], input: "first secret\nlogin: alice\n")
        try alice.check(["insert", "-m", "team/büro konto"], input: "second secret\n")
        #expect(try alice.check(["show", "web/mail"]).outputText == "first secret\nlogin: alice")
        let decrypted = try alice.tool(["gpg", "--batch", "--quiet", "-d", alice.store + "/web/mail.gpg"])
        #expect(decrypted.status == 0 && decrypted.outputText == "first secret\nlogin: alice")
        let shownByPass = try alice.tool(["/usr/bin/pass", "show", "team/büro konto"])
        #expect(shownByPass.status == 0 && shownByPass.outputText == "second secret")

        // Again: nothing changes, and it says what is there.
        let before = try alice.head()
        let again = try alice.check(["setup", "--remote", "file://" + remote])
        #expect(again.outputText.contains("set up for \(aliceKey)"))
        #expect(try alice.head() == before)
        let secretKeys = try alice.tool(["gpg", "--batch", "--with-colons", "--list-secret-keys"]).outputText
        #expect(secretKeys.split(separator: "\n").filter { $0.hasPrefix("sec:") }.count == 1)
        try alice.check(["sync"])

        // Bob clones and is told who he is and what a recipient must run.
        let joined = try bob.check([
            "setup", "--clone", "file://" + remote, "--name", "Bob", "--email", "bob@coffer.test",
            "--no-passphrase",
        ])
        let bobKey = try bob.fingerprint()
        #expect(bobKey != aliceKey)
        #expect(joined.outputText.contains("Your key: \(bobKey)"))
        #expect(joined.outputText.contains("recipients add \(bobKey)"))
        #expect(try bob.run(["show", "web/mail"]).status != 0)

        // Alice's sync brings his key file but does not take it in: no .gpg-id names him yet.
        let synced = try alice.check(["sync"])
        #expect(!synced.outputText.contains("Imported"))
        #expect(try alice.tool(["gpg", "--batch", "--list-keys", bobKey]).status != 0)
        // Naming him takes his key from the store; she adds him and pushes.
        let added = try alice.check(["recipients", "add", bobKey])
        #expect(added.outputText.contains("2 entries re-encrypted"))
        #expect(
            try alice.tool(["git", "-C", alice.store, "log", "-1", "--format=%s"]).outputText.hasPrefix(
                "Add recipient \(bobKey)"))
        let listed = try alice.check(["recipients"]).outputText
        #expect(listed.contains("\(bobKey)  Bob <bob@coffer.test>  never expires  ok"))
        #expect(listed.contains("\(aliceKey)  Alice <alice@coffer.test>  never expires  ok"))
        try alice.check(["sync"])

        // Bob reads every entry, and what he writes Alice reads: his keyring took her key as valid.
        try bob.check(["sync"])
        #expect(try bob.check(["show", "web/mail"]).outputText == "first secret\nlogin: alice")
        #expect(try bob.check(["show", "team/büro konto"]).outputText == "second secret")
        try bob.check(["insert", "-m", "team/from bob"], input: "bob's secret\n")
        try bob.check(["sync"])
        try alice.check(["sync"])
        #expect(try alice.check(["show", "team/from bob"]).outputText == "bob's secret")
        #expect(try alice.tool(["/usr/bin/pass", "show", "team/from bob"]).outputText == "bob's secret")
    }

    @Test("recipients add whose commit fails puts every file back and exits non-zero")
    func failedCommitPutsBack() throws {
        let installed = try InstalledAsPass(git: true)
        let keys = installed.sandbox.keys
        try installed.insert("team/a", "secret a\n")
        try installed.insert("web/b", "secret b\n")
        func snapshot() throws -> [String: [UInt8]] {
            var files: [String: [UInt8]] = [:]
            for name in [".gpg-id", "team/a.gpg", "web/b.gpg"] {
                files[name] = try installed.sandbox.read(installed.store + "/" + name)
            }
            return files
        }
        let before = try snapshot()
        let head = try installed.git(["rev-parse", "HEAD"])
        try "#!/bin/sh\nexit 1\n".write(toFile: installed.store + "/.git/hooks/pre-commit")
        chmod(installed.store + "/.git/hooks/pre-commit", 0o755)
        let failed = try installed.run(["recipients", "add", keys[1].fingerprint])
        #expect(failed.status != 0)
        #expect(try snapshot() == before)
        #expect(!FileSystem.exists(installed.store + "/.public-keys/" + keys[1].fingerprint))
        #expect(try installed.git(["rev-parse", "HEAD"]) == head)
        #expect(try installed.uncommitted().isEmpty)
        unlink(installed.store + "/.git/hooks/pre-commit")
        try installed.check(["recipients", "add", keys[1].fingerprint])
        // init, git init, two inserts, the recipients change.
        #expect(try installed.commitCount() == 5)
    }

    /// Makes a key `Name <address>` with an encryption subkey in the sandbox's keyring; returns its fingerprint.
    private static func makeKey(
        _ installed: InstalledAsPass, _ userID: String, subkeyExpiry: String = "never"
    ) throws
        -> String
    {
        let sandbox = installed.sandbox
        try sandbox.check([
            "gpg", "--batch", "--passphrase", "", "--quick-gen-key", userID, "ed25519", "cert,sign", "never",
        ])
        let listing = try sandbox.check(["gpg", "--batch", "--with-colons", "--list-keys", "=" + userID])
            .outputText
        guard let line = listing.split(separator: "\n").first(where: { $0.hasPrefix("fpr:") }) else {
            throw SandboxError("no key for \(userID)")
        }
        let fingerprint = String(line.split(separator: ":", omittingEmptySubsequences: false)[9])
        try sandbox.check([
            "gpg", "--batch", "--passphrase", "", "--quick-add-key", fingerprint, "cv25519", "encr",
            subkeyExpiry,
        ])
        return fingerprint
    }

    @Test("recipients changes only what it names exactly, keeps comments, and refuses what it cannot do")
    func recipientsExactly() throws {
        let installed = try InstalledAsPass(git: true)
        let keys = installed.sandbox.keys
        let ann = try Self.makeKey(installed, "Ann <ann@x.test>")
        let joann = try Self.makeKey(installed, "Joann <joann@x.test>")
        // gpg takes ann@x.test for a part of a user id: it matches Joann too, and which of them would read
        // the entry is gpg's choice. Writes and the listing refuse such a line.
        try "# the team\n\(keys[0].fingerprint)  # me\nann@x.test\n".write(
            toFile: installed.store + "/.gpg-id")
        try installed.git(["commit", "-q", "-m", "ambiguous", "--", ".gpg-id"])
        let ambiguous = try installed.run(["insert", "-m", "-f", "site"], input: "secret\n")
        #expect(
            ambiguous.status == 1 && ambiguous.errorText.contains("matches 2 keys"), "\(ambiguous.errorText)")
        #expect(!FileSystem.exists(installed.store + "/site.gpg"))
        let listed = try installed.run(["recipients"])
        #expect(listed.status == 1 && listed.errorText.contains("matches 2 keys"), "\(listed.errorText)")
        try "# the team\n\(keys[0].fingerprint)  # me\n<ann@x.test>\n<joann@x.test>\n".write(
            toFile: installed.store + "/.gpg-id")
        try installed.git(["commit", "-q", "-m", "team", "--", ".gpg-id"])
        try installed.insert("site", "secret\n")
        // ann@x.test is a part of joann@x.test: only Ann goes, and the comments stay.
        try installed.check(["recipients", "rm", "ann@x.test"])
        #expect(
            try String(decoding: installed.sandbox.read(installed.store + "/.gpg-id"), as: UTF8.self)
                == "# the team\n\(keys[0].fingerprint)  # me\n<joann@x.test>\n")
        let engine = installed.sandbox.engine
        let wanted = try engine.encryptionKeyIDs(for: [keys[0].fingerprint, joann])
        #expect(
            OpenPGPPackets.recipientKeyIDs(try installed.sandbox.read(installed.store + "/site.gpg"))
                == wanted)
        #expect(!(try installed.check(["recipients"]).outputText.contains(ann)))

        // A key that a gpg group still stands for cannot be removed by removing another line.
        try "group crew = \(keys[1].fingerprint)\n".write(toFile: installed.sandbox.gnupgHome + "/gpg.conf")
        try installed.check(["recipients", "add", keys[2].fingerprint])
        var text = try String(decoding: installed.sandbox.read(installed.store + "/.gpg-id"), as: UTF8.self)
        text += "crew\n"
        try text.write(toFile: installed.store + "/.gpg-id")
        try installed.git(["commit", "-q", "-m", "crew", "--", ".gpg-id"])
        #expect(try installed.check(["recipients"]).outputText.contains("crew  (gpg group of 1 keys)"))
        let head = try installed.git(["rev-parse", "HEAD"])
        for (arguments, environment, message) in [
            (["recipients", "rm", keys[1].fingerprint], [:], "through the line \"crew\""),
            (["recipients", "add", keys[1].fingerprint], [:], "is a recipient of the store already"),
            (["recipients", "rm", "x.test"], [:], "matches 2 keys"),
            (
                ["recipients", "rm", keys[2].fingerprint], ["PASSWORD_STORE_KEY": keys[0].fingerprint],
                "PASSWORD_STORE_KEY"
            ),
            (["recipients", "add", "-p", ".git", keys[1].fingerprint], [:], "hidden folder"),
        ] as [([String], [String: String], String)] {
            let output = try installed.run(arguments, environment: environment)
            #expect(output.status == 1, "\(arguments)")
            #expect(output.errorText.contains(message), "\(arguments): \(output.errorText)")
        }
        #expect(try installed.git(["rev-parse", "HEAD"]) == head)
        #expect(try installed.uncommitted().isEmpty)

        // A folder that is a link out of the store is refused, as init -p refuses it.
        let outside = installed.sandbox.directory + "/outside"
        mkdir(outside, 0o700)
        symlink(outside, installed.store + "/shared")
        let linked = try installed.run(["recipients", "add", "-p", "shared", keys[1].fingerprint])
        #expect(linked.status == 1 && linked.errorText.contains("outside the password store"))
        #expect(!FileSystem.exists(outside + "/.gpg-id"))
    }

    @Test(
        "a recipients change stopped by SIGTERM or SIGHUP finishes first: never .gpg-id without its entries")
    func recipientsChangeHoldsSignals() throws {
        let installed = try InstalledAsPass(git: false)
        let keys = installed.sandbox.keys
        let store = installed.sandbox.store()
        for index in 0..<200 { try store.write("e\(index)", SecureBytes(string: "secret \(index)\n")) }
        try installed.check(["git", "init"])
        try installed.check(["recipients", "add", keys[1].fingerprint])
        let engine = installed.sandbox.engine
        let alone = try engine.encryptionKeyIDs(for: [keys[0].fingerprint])
        let both = try engine.encryptionKeyIDs(for: [keys[0].fingerprint, keys[1].fingerprint])
        for (round, signal) in [SIGTERM, SIGHUP].enumerated() {
            let adding = round % 2 == 1
            var environment = installed.environment
            environment["PASSWORD_STORE_DIR"] = installed.store
            let pid = try TestProcess.start(
                [installed.program, "recipients", adding ? "add" : "rm", keys[1].fingerprint],
                environment: environment)
            usleep(150_000)
            TestProcess.stop(pid, signal: signal)
            // Either nothing happened or all of it, committed.
            #expect(try installed.uncommitted().isEmpty)
            let recipients = try String(
                decoding: installed.sandbox.read(installed.store + "/.gpg-id"), as: UTF8.self)
            let expected = recipients.contains(keys[1].fingerprint) ? both : alone
            for index in 0..<200 {
                #expect(
                    OpenPGPPackets.recipientKeyIDs(
                        try installed.sandbox.read(installed.store + "/e\(index).gpg")) == expected)
            }
            // Back to both for the next round.
            if !recipients.contains(keys[1].fingerprint) {
                try installed.check(["recipients", "add", keys[1].fingerprint])
            }
        }
    }

    @Test("sync imports a kept key only when a .gpg-id names it and the file holds that key alone")
    func keptKeysImportedWithCare() throws {
        let clones = try SyncClones(entries: [("web/a", "a\n"), ("team/b", "b\n")])
        let keys = clones.sandbox.keys
        let other = try Person(clones.installed, "other")
        defer { other.stopAgent() }
        // The other clone's keyring holds keys[0] only.
        try clones.sandbox.check(["rm", "-rf", other.home + "/.gnupg", other.store])
        try clones.sandbox.check(["cp", "-a", clones.sandbox.gnupgHome, other.home + "/.gnupg"])
        for key in keys.dropFirst() {
            _ = try other.tool([
                "gpg", "--batch", "--yes", "--delete-secret-and-public-keys", key.fingerprint,
            ])
        }
        try clones.sandbox.check(["cp", "-a", clones.two, other.store])
        func export(_ fingerprints: [String]) throws -> String {
            try clones.sandbox.check(["gpg", "--batch", "--armor", "--export"] + fingerprints).outputText
                + "\n"
        }
        // keys[1]'s file holds keys[2] too; keys[2]'s file is right, but no .gpg-id names keys[2].
        let folder = clones.one + "/.public-keys"
        mkdir(folder, 0o700)
        try export([keys[1].fingerprint, keys[2].fingerprint]).write(
            toFile: folder + "/" + keys[1].fingerprint)
        try export([keys[2].fingerprint]).write(toFile: folder + "/" + keys[2].fingerprint)
        try "\(keys[0].fingerprint)\n\(keys[1].fingerprint)\n".write(toFile: clones.one + "/team/.gpg-id")
        try clones.git(clones.one, ["add", "-A"])
        try clones.git(clones.one, ["commit", "-q", "-m", "keys"])
        try clones.git(clones.one, ["push", "-q"])
        let pulled = try other.run(["sync"])
        #expect(!pulled.outputText.contains("Imported"))
        for key in keys.dropFirst() {
            #expect(try other.tool(["gpg", "--batch", "--list-keys", key.fingerprint]).status != 0)
        }
        // A right file for a key team/.gpg-id names is taken in.
        try export([keys[1].fingerprint]).write(toFile: folder + "/" + keys[1].fingerprint)
        try clones.git(clones.one, ["commit", "-q", "-a", "-m", "right key"])
        try clones.git(clones.one, ["push", "-q"])
        let fixed = try other.run(["sync"])
        #expect(
            fixed.outputText.contains("Imported 1 recipient key"), "\(fixed.outputText) \(fixed.errorText)")
        #expect(try other.tool(["gpg", "--batch", "--list-keys", keys[1].fingerprint]).status == 0)
        #expect(try other.tool(["gpg", "--batch", "--list-keys", keys[2].fingerprint]).status != 0)
    }

    @Test("setup keeps no broken remote, clones only what it is asked to, and publishes a key that changed")
    func setupRemotesAndKeyUpdates() throws {
        let installed = try InstalledAsPass(git: false)
        let remote = "file://" + installed.sandbox.directory + "/remote.git"
        try installed.sandbox.check([
            "git", "init", "-q", "--bare", installed.sandbox.directory + "/remote.git",
        ])
        let alice = try Person(installed, "alice")
        let bob = try Person(installed, "bob")
        defer {
            alice.stopAgent()
            bob.stopAgent()
        }
        let typo = try alice.run([
            "setup", "--name", "Alice", "--email", "alice@coffer.test", "--no-passphrase", "--remote",
            remote + "-typo",
        ])
        #expect(typo.status != 0)
        #expect(typo.errorText.split(separator: "\n").count == 1, "\(typo.errorText)")
        #expect(try alice.tool(["git", "-C", alice.store, "remote"]).outputText.isEmpty)
        try alice.check(["setup", "--remote", remote])
        try alice.check(["insert", "-m", "web/a"], input: "a secret\n")
        try alice.check(["sync"])

        #expect(
            try bob.run([
                "setup", "--name", "Bob", "--email", "bob@coffer.test", "--no-passphrase", "--clone",
                remote + "-typo",
            ]).status != 0)
        try bob.check([
            "setup", "--name", "Bob", "--email", "bob@coffer.test", "--no-passphrase", "--clone", remote,
        ])
        let other = try bob.run(["setup", "--clone", remote + "-other"])
        #expect(other.status == 1 && other.errorText.contains("not a clone of"))
        let bobKey = try bob.fingerprint()
        try alice.check(["sync"])
        try alice.check(["recipients", "add", bobKey])
        try alice.check(["sync"])

        // Bob's encryption subkey gets a new expiry date; setup publishes it and Alice's sync takes it.
        _ = try bob.tool(["gpg", "--batch", "--passphrase", "", "--quick-set-expire", bobKey, "2y", "*"])
        try bob.check(["setup", "--clone", remote])
        #expect(
            try bob.tool(["git", "-C", bob.store, "log", "-1", "--format=%s"]).outputText
                == "Update the public key of \(bobKey).")
        func expiries(_ person: Person) throws -> [String] {
            try person.tool(["gpg", "--batch", "--with-colons", "--list-keys", bobKey]).outputText.split(
                separator: "\n"
            )
            .filter { $0.hasPrefix("sub:") }.map {
                String($0.split(separator: ":", omittingEmptySubsequences: false)[6])
            }
        }
        #expect(try expiries(alice) == [""])
        let updated = try alice.check(["sync"])
        #expect(updated.outputText.contains("Imported 1 recipient key"), "\(updated.outputText)")
        #expect(try expiries(alice) == expiries(bob))
        #expect(try expiries(alice) != [""])
    }

    @Test("setup --clone and setup write no key through a .public-keys that another clone made a link out")
    func publicKeysLinkedOutOfTheStore() throws {
        let installed = try InstalledAsPass(git: false)
        let sandbox = installed.sandbox
        let remote = sandbox.directory + "/remote.git"
        try sandbox.check(["git", "init", "-q", "--bare", remote])
        let alice = try Person(installed, "alice")
        let bob = try Person(installed, "bob")
        let carol = try Person(installed, "carol")
        defer { for person in [alice, bob, carol] { person.stopAgent() } }
        try alice.check([
            "setup", "--name", "Alice", "--email", "alice@coffer.test", "--no-passphrase", "--remote",
            "file://" + remote,
        ])
        // Another clone, with plain git, makes .public-keys a link to a folder outside and pushes it.
        let outside = sandbox.directory + "/outside"
        mkdir(outside, 0o777)
        let other = sandbox.directory + "/other"
        try sandbox.check(["git", "clone", "-q", "file://" + remote, other])
        try sandbox.check(["git", "-C", other, "rm", "-q", "-r", ".public-keys"])
        try #require(symlink(outside, other + "/.public-keys") == 0)
        try sandbox.check(["git", "-C", other, "add", ".public-keys"])
        try sandbox.check(["git", "-C", other, "commit", "-q", "-m", "Keys elsewhere."])
        try sandbox.check(["git", "-C", other, "push", "-q", "origin", "HEAD"])
        func expectRefused(_ output: ChildProcess.Output, _ step: String) throws {
            #expect(output.status == 1, "\(step)")
            #expect(
                output.errorText.hasPrefix("Error: ")
                    && output.errorText.contains("outside the password store")
                    && !output.errorText.contains("\n"), "\(step): \(output.errorText)")
            #expect(try FileSystem.contents(of: outside).isEmpty, "\(step)")
        }

        // Bob joins, and runs it again: his key is not written through the link.
        let joining = [
            "setup", "--clone", "file://" + remote, "--name", "Bob", "--email", "bob@coffer.test",
            "--no-passphrase",
        ]
        try expectRefused(try bob.run(joining), "setup --clone")
        try expectRefused(try bob.run(["setup", "--clone", "file://" + remote]), "setup --clone again")
        #expect(try bob.tool(["git", "-C", bob.store, "status", "--porcelain"]).outputText.isEmpty)

        // Carol's store is a plain git clone that holds nothing but such a link; setup sets it up for her
        // and writes no key through it.
        let links = sandbox.directory + "/links"
        try sandbox.check(["git", "init", "-q", links])
        try #require(symlink(outside, links + "/.public-keys") == 0)
        try sandbox.check(["git", "-C", links, "add", ".public-keys"])
        try sandbox.check(["git", "-C", links, "commit", "-q", "-m", "Keys elsewhere."])
        _ = try carol.tool(["git", "clone", "-q", links, carol.store]).exitedZero("git clone")
        try expectRefused(
            try carol.run(["setup", "--name", "Carol", "--email", "carol@coffer.test", "--no-passphrase"]),
            "setup")
    }

    @Test(
        "recipients add and rm on 300 entries: the right ones re-encrypted, one commit, keys kept and imported"
    )
    func recipientsOnAFolder() throws {
        let installed = try InstalledAsPass(git: false)
        let sandbox = installed.sandbox
        let keys = sandbox.keys
        // 250 entries at the top, 50 in team/; written by the library, then committed by `git init`.
        let store = sandbox.store()
        for index in 0..<300 {
            let name = index < 250 ? "site\(index)/account" : "team/member \(index)"
            try store.write(name, SecureBytes(string: "secret \(index)\nlogin: user\(index)\n"))
        }
        try installed.check(["git", "init"])
        let remote = sandbox.directory + "/remote.git"
        try sandbox.check(["git", "init", "-q", "--bare", remote])
        try installed.git(["remote", "add", "origin", "file://" + remote])
        try installed.check(["sync"])

        // A second clone whose keyring lacks keys[1].
        let other = try Person(installed, "other")
        defer { other.stopAgent() }
        try sandbox.check(["rm", "-rf", other.home + "/.gnupg"])
        try sandbox.check(["cp", "-a", sandbox.gnupgHome, other.home + "/.gnupg"])
        _ = try other.tool([
            "gpg", "--batch", "--yes", "--delete-secret-and-public-keys", keys[1].fingerprint,
        ])
        #expect(try other.tool(["gpg", "--batch", "--list-keys", keys[1].fingerprint]).status != 0)
        try other.check(["clone", "file://" + remote])

        let engine = sandbox.engine
        let onlyFirst = try engine.encryptionKeyIDs(for: [keys[0].fingerprint])
        let both = try engine.encryptionKeyIDs(for: [keys[0].fingerprint, keys[1].fingerprint])
        func keyIDs(_ name: String) throws -> Set<String>? {
            OpenPGPPackets.recipientKeyIDs(try sandbox.read(installed.store + "/" + name + ".gpg"))
        }
        var untouched: [String: [UInt8]] = [:]
        for index in 0..<250 {
            untouched["site\(index)/account"] = try sandbox.read(
                installed.store + "/site\(index)/account.gpg")
        }
        let commits = try installed.commitCount()

        let added = try installed.check(["recipients", "add", "-p", "team", keys[1].email])
        #expect(added.outputText.contains("50 entries re-encrypted"))
        #expect(try installed.commitCount() == commits + 1)
        #expect(try installed.uncommitted().isEmpty)
        let changed = Set(
            try installed.git(["show", "--name-only", "--format=", "HEAD"]).split(separator: "\n").map(
                String.init))
        let expected = Set(
            (250..<300).map { "team/member \($0).gpg" } + [
                "team/.gpg-id", ".public-keys/" + keys[1].fingerprint,
            ])
        #expect(changed == expected)
        for index in 250..<300 { #expect(try keyIDs("team/member \(index)") == both) }
        for (name, bytes) in untouched {
            #expect(try sandbox.read(installed.store + "/" + name + ".gpg") == bytes)
        }
        #expect(
            try String(decoding: sandbox.read(installed.store + "/team/.gpg-id"), as: UTF8.self) == keys[0]
                .fingerprint + "\n" + keys[1].fingerprint + "\n")
        let kept = try sandbox.run([
            "gpg", "--batch", "--with-colons", "--show-keys",
            installed.store + "/.public-keys/" + keys[1].fingerprint,
        ])
        #expect(kept.outputText.contains("fpr:::::::::\(keys[1].fingerprint):"))
        #expect(try installed.check(["show", "team/member 260"]).outputText == "secret 260\nlogin: user260")
        try installed.check(["sync"])

        // The other clone imports the key it lacked, as data: it is not accepted until its user says so,
        // and then the other clone can write to team/ for both.
        let pulled = try other.check(["sync"])
        #expect(pulled.outputText.contains("Imported 1 recipient key"))
        #expect(
            pulled.outputText.contains("recipients accept -p team \(keys[1].fingerprint)"),
            "\(pulled.outputText)")
        #expect(try other.tool(["gpg", "--batch", "--list-keys", keys[1].fingerprint]).status == 0)
        let refused = try other.run(["insert", "-m", "team/new"], input: "new secret\n")
        #expect(refused.status == 1, "\(refused.errorText)")
        #expect(refused.errorText.contains("recipients accept -p team \(keys[1].fingerprint)"))
        #expect(!FileSystem.exists(other.store + "/team/new.gpg"))
        try other.check(["recipients", "accept", "-p", "team", keys[1].fingerprint])
        try other.check(["insert", "-m", "team/new"], input: "new secret\n")
        #expect(OpenPGPPackets.recipientKeyIDs(try sandbox.read(other.store + "/team/new.gpg")) == both)
        try other.check(["sync"])
        try installed.check(["sync"])

        // Removing, with .gpg-id signed: every team entry for keys[0] alone, again one commit.
        let signing = ["PASSWORD_STORE_SIGNING_KEY": keys[0].fingerprint]
        let before = try installed.commitCount()
        let removed = try installed.check(
            ["recipients", "rm", "-p", "team", keys[1].fingerprint], environment: signing)
        #expect(removed.outputText.contains("51 entries re-encrypted"))
        #expect(try installed.commitCount() == before + 1)
        #expect(try installed.uncommitted().isEmpty)
        for index in 250..<300 { #expect(try keyIDs("team/member \(index)") == onlyFirst) }
        #expect(try keyIDs("team/new") == onlyFirst)
        let verified = try sandbox.run([
            "gpg", "--batch", "--verify", installed.store + "/team/.gpg-id.sig",
            installed.store + "/team/.gpg-id",
        ])
        #expect(verified.status == 0)
        let removedFiles = try installed.git(["show", "--name-only", "--format=", "HEAD"])
        #expect(removedFiles.contains("team/.gpg-id.sig"))
        // No .gpg-id names keys[1] any more: its kept key goes in the same commit.
        #expect(removedFiles.contains(".public-keys/" + keys[1].fingerprint))
        #expect(!FileSystem.exists(installed.store + "/.public-keys/" + keys[1].fingerprint))
        #expect(try installed.check(["show", "team/new"], environment: signing).outputText == "new secret")

        // Refusals change nothing.
        let head = try installed.git(["rev-parse", "HEAD"])
        for arguments in [
            ["recipients", "rm", "-p", "team", keys[0].fingerprint],  // the last one
            ["recipients", "rm", keys[2].fingerprint],  // not a recipient
            ["recipients", "add", "nobody@coffer.test"],  // no such key
            ["recipients", "add", "-p", "missing", keys[1].fingerprint],  // no such folder
            ["recipients", "-p", "missing"],
        ] {
            let output = try installed.run(arguments, environment: signing)
            #expect(output.status == 1, "\(arguments)")
            #expect(output.errorText.split(separator: "\n").count == 1, "\(arguments): \(output.errorText)")
        }
        #expect(try installed.git(["rev-parse", "HEAD"]) == head)
        #expect(try installed.uncommitted().isEmpty)
    }
}
