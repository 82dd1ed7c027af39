import CofferTestSupport

@testable import Coffer

/// The sync model's hostile clone: Mallory, who may read `team/` (the honest clone one adds her key there
/// at setup) and pushes to the shared remote with plain git whatever she likes. Her pushes add and move
/// but never destroy (a pusher can delete, which SECURITY.md names as a limit): renames and copies of
/// entries from other folders into `team/`, her key appended to other `.gpg-id` files with the key kept in
/// `.public-keys/`, deleted subfolder `.gpg-id` files, a user id on her key that copies an honest one's
/// email, folder and entry links, and names with escape sequences and newlines.
///
/// The invariant: no value an honest clone wrote outside `team/` is ever decryptable with Mallory's key,
/// in any object of the remote. The honest users never move entries across `team/`'s edge themselves and
/// never touch what Mallory planted (names starting `m-`), so that every way out is coffer's doing.
extension SyncModelRun {
    /// The folder Mallory may read.
    static let hostileFolder = "team"

    /// Whether `path` (relative to a clone) is something Mallory planted.
    static func isPlanted(_ path: String) -> Bool {
        path.split(separator: "/").contains { $0.hasPrefix("m-") }
    }

    /// Whether `name` (an entry or a path) is inside the folder Mallory may read.
    static func isHostileFolder(_ name: String) -> Bool {
        name.hasPrefix(hostileFolder + "/")
    }

    /// Makes Mallory's key (in her own keyring) and gives its public part to the honest keyring, as data.
    /// Returns her fingerprint.
    func makeHostileKey() throws -> String {
        let lines = [
            "mkdir -m 700 \"$S/mallory-gnupg\"",
            "GNUPGHOME=\"$S/mallory-gnupg\" gpg --batch --quiet --passphrase '' --quick-gen-key "
                + "'Mallory <mallory@coffer.test>' ed25519 sign never",
            "GNUPGHOME=\"$S/mallory-gnupg\" gpg --batch --quiet --passphrase '' --quick-add-key "
                + "\"$(GNUPGHOME=\"$S/mallory-gnupg\" gpg --batch --with-colons --list-keys mallory@coffer.test"
                + " | awk -F: '/^fpr/ {print $10; exit}')\" cv25519 encr never",
            "GNUPGHOME=\"$S/mallory-gnupg\" gpg --batch --armor --export mallory@coffer.test"
                + " | gpg --batch --quiet --import",
        ]
        for (index, line) in lines.enumerated() {
            let result = try shell(line, comment: index == 0 ? "Mallory's key, in her own keyring" : nil)
            guard result.status == 0 else { throw SandboxError("\(line): \(result.errorText)") }
        }
        let listing = try TestProcess.run(
            ["gpg", "--batch", "--with-colons", "--list-keys", "mallory@coffer.test"],
            environment: environment.merging(["GNUPGHOME": sandbox.directory + "/mallory-gnupg"]) { $1 })
        guard
            let line = listing.outputText.split(separator: "\n").first(where: { $0.hasPrefix("fpr:") })
        else { throw SandboxError("no key for Mallory") }
        return String(line.split(separator: ":", omittingEmptySubsequences: false)[9])
    }

    /// Clone one's setup lines for the hostile clone: `team/` for clone one's key and Mallory's.
    func hostileSetupLines(key: String) -> [String] {
        [
            command(0, "path", ["init", "-p", Self.hostileFolder, sandbox.keys[0].email]),
            command(0, "path", ["recipients", "add", "-p", Self.hostileFolder, key]),
        ]
    }

    /// Mallory's plain git clone, made once the store is on the remote.
    func cloneForMallory() throws {
        let line =
            "\"$SYNCMODEL_GIT\" clone -q -b main \"$S/remote.git\" \"$S/mallory\""
        let result = try shell(line, comment: "Mallory clones with plain git")
        guard result.status == 0 else { throw SandboxError("\(line): \(result.errorText)") }
    }

    /// One push of Mallory's: she takes the remote's tip, changes one thing and pushes it (a push the
    /// remote refuses, because it moved, is simply lost).
    func hostileStep() throws {
        guard let key = hostileKey else { return }
        let tree = try remoteTree()
        let outside = tree.filter {
            $0.hasSuffix(".gpg") && !Self.isHostileFolder($0) && !Self.isPlanted($0)
                && !$0.hasPrefix(PasswordStore.publicKeysFolder + "/")
        }
        let number = hostileRandom.next() % 1000
        var change: String
        var what: String
        let roll = Int(hostileRandom.next() % 100)
        let export =
            "mkdir -p .public-keys && GNUPGHOME=\"$S/mallory-gnupg\" gpg --batch --armor --export \(key) > .public-keys/\(key)"
        if roll < 30, let source = pick(outside) {
            let target = "\(Self.hostileFolder)/m-moved-\(number).gpg"
            change =
                "mkdir -p \(Self.hostileFolder) && \"$SYNCMODEL_GIT\" mv -- \(SyncModelShell.quote(source)) \(target)"
            what = "renames \(source) to \(target)"
        } else if roll < 50, let source = pick(outside) {
            let target = "\(Self.hostileFolder)/m-copy-\(number).gpg"
            change = "mkdir -p \(Self.hostileFolder) && cp -- \(SyncModelShell.quote(source)) \(target)"
            what = "copies \(source) to \(target)"
        } else if roll < 65 {
            let candidates = recipientFolders.filter { $0 != Self.hostileFolder }.map {
                ($0.isEmpty ? "" : $0 + "/") + ".gpg-id"
            }.filter { tree.contains($0) }
            guard let file = pick(candidates) else { return }
            change = "printf '%s\\n' \(key) >> \(SyncModelShell.quote(file)) && \(export)"
            what = "adds her key to \(file)"
        } else if roll < 75 {
            let candidates = recipientFolders.filter { !$0.isEmpty }.map { $0 + "/.gpg-id" }.filter {
                tree.contains($0)
            }
            guard let file = pick(candidates) else { return }
            change =
                "\"$SYNCMODEL_GIT\" rm -q -f --ignore-unmatch -- \(SyncModelShell.quote(file)) \(SyncModelShell.quote(file + ".sig"))"
            what = "deletes \(file)"
        } else if roll < 82 {
            let victim = sandbox.keys[Int(hostileRandom.next() % UInt64(sandbox.keys.count))].email
            change =
                "{ GNUPGHOME=\"$S/mallory-gnupg\" gpg --batch --quiet --quick-add-uid \(key) "
                + "'Spoof <\(victim)>' || true; } && \(export)"
            what = "gives her key the user id of \(victim)"
        } else if roll < 90 {
            if hostileRandom.next() % 2 == 0 {
                change = "ln -sfn \(Self.hostileFolder) m-shortcut-\(number)"
                what = "adds a folder link to \(Self.hostileFolder)"
            } else {
                guard let target = pick(tree.filter { Self.isHostileFolder($0) && $0.hasSuffix(".gpg") }),
                    let folder = pick(outside.map(PasswordStore.folder(of:)).filter { !$0.isEmpty })
                else { return }
                let depth = folder.split(separator: "/").count
                let relative = String(repeating: "../", count: depth) + target
                change =
                    "ln -sfn \(SyncModelShell.quote(relative)) \(SyncModelShell.quote(folder + "/m-link-\(number).gpg"))"
                what = "links \(folder)/m-link-\(number).gpg to \(target)"
            }
        } else {
            guard let source = pick(tree.filter { Self.isHostileFolder($0) && $0.hasSuffix(".gpg") }) else {
                return
            }
            let name =
                hostileRandom.next() % 2 == 0
                ? "m-evil\u{1b}[31m\u{1b}]0;owned\u{07}" : "m-x\nPushed local changes."
            change =
                "cp -- \(SyncModelShell.quote(source)) \(SyncModelShell.quote(Self.hostileFolder + "/" + name + ".gpg"))"
            what = "copies \(source) under a name with control characters"
        }
        let git = "\"$SYNCMODEL_GIT\""
        let line =
            "cd \"$S/mallory\" && \(git) fetch -q origin && \(git) reset -q --hard origin/main && { \(change); } && "
            + "\(git) add -A && \(git) -c user.name=Mallory -c user.email=mallory@coffer.test commit -q -m tidy && "
            + "\(git) push -q origin HEAD:main"
        let result = try shell(line, comment: "Mallory \(what) and pushes")
        if result.status == 0 { hostilePushes += 1 }
    }

    /// A random element of `items`, chosen by the hostile clone's own generator.
    private func pick(_ items: [String]) -> String? {
        items.isEmpty ? nil : items[Int(hostileRandom.next() % UInt64(items.count))]
    }

    /// The paths of the remote's tip.
    func remoteTree() throws -> [String] {
        guard let head = try remoteHead() else { return [] }
        let listing = try checkGit([
            "--git-dir", sandbox.directory + "/remote.git", "ls-tree", "-r", "-z", "--name-only", head,
        ])
        return listing.standardOutput.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The invariant: every OpenPGP message among the objects of the remote that Mallory's key opens holds
    /// no value an honest clone wrote outside `team/`.
    func checkHostileReads() throws {
        let output = try TestProcess.run(
            [
                "git", "--git-dir", sandbox.directory + "/remote.git", "cat-file", "--batch-all-objects",
                "--batch",
            ],
            environment: sandbox.environment)
        var bytes = output.standardOutput[...]
        var messages: [[UInt8]] = []
        while let newline = bytes.firstIndex(of: 10) {
            let header = String(decoding: bytes[..<newline], as: UTF8.self).split(separator: " ")
            bytes = bytes[(newline + 1)...]
            guard header.count == 3, let size = Int(header[2]), bytes.count >= size else { break }
            let content = Array(bytes.prefix(size))
            bytes = bytes.dropFirst(size + 1)
            if header[1] == "blob", let first = content.first,
                first & 0x80 != 0 || content.starts(with: Array("-----BEGIN PGP".utf8))
            {
                messages.append(content)
            }
        }
        let mallory = environment.merging(["GNUPGHOME": sandbox.directory + "/mallory-gnupg"]) { $1 }
        for message in messages {
            let decrypted = try TestProcess.run(
                ["gpg", "--batch", "--quiet", "--decrypt"], environment: mallory, input: message)
            guard decrypted.status == 0 else { continue }
            figures.hostileReadable += 1
            for marker in SyncModelText.markers(in: decrypted.standardOutput, tag: tag) {
                guard let folder = writtenIn[marker], !Self.isHostileFolder(folder + "/") else { continue }
                failOnce(
                    "hostile-read " + marker, "hostile-clone-reads",
                    "Mallory's key decrypts a message on the remote holding \(marker), which "
                        + "\(ledger.story(of: marker, cloneNames: Self.cloneNames)) wrote in "
                        + "\(folder.isEmpty ? "the store's root" : folder)")
            }
        }
    }

    /// Every `.gpg-id` a sync that exits 0 changed on a clone that was settled before is in its report.
    func checkRecipientReport(before: SyncModelSnapshot, after: SyncModelSnapshot, output: String) {
        let files = Set(before.otherFiles + after.otherFiles).filter {
            ($0 == ".gpg-id" || $0.hasSuffix("/.gpg-id")) && !Self.isPlanted($0)
        }
        for file in files.sorted() where before.items[file]?.text != after.items[file]?.text {
            let folder = file == ".gpg-id" ? "" : String(file.dropLast("/.gpg-id".count))
            let place = folder.isEmpty ? "the store" : Quoting.quoted(folder)
            let said =
                after.items[file] == nil
                ? output.contains("\(Quoting.quoted(file)) removed")
                : output.contains("Recipients of \(place) changed")
            if !said {
                failOnce(
                    "unreported " + file, "recipient-change-unreported",
                    "a sync changed \(file) but its output does not say so: \(output.lastLines)")
            }
        }
    }
}
