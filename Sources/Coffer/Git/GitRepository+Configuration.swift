#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension GitRepository {
    /// Whether `pass.signcommits` asks for signed commits; what git said is kept for a few seconds, so
    /// that a run of writes asks once, and a long-running program sees a change soon.
    var signsCommits: Bool {
        let now = ChildProcess.monotonicSeconds()
        if let known = Self.signing.withLock({ $0[directory] }), now - known.readAt < 5 { return known.value }
        let value =
            configurationMayMention(["signcommits"])
            ? (try? run(["config", "--bool", "--get", "pass.signcommits"]))?.outputText == "true" : false
        Self.signing.withLock { $0[directory] = (value, now) }
        return value
    }

    private static let signing = Locked<[String: (value: Bool, readAt: Double)]>([:])

    /// The options that go before `commit`: `-c maintenance.auto=false` when git's own automatic
    /// maintenance after the commit would find nothing to do, which saves the `git maintenance run
    /// --auto` process git starts after every commit; nothing otherwise, and git decides.
    ///
    /// Nothing to do is judged as git judges it with its default settings (git 2.39's `gc --auto`,
    /// the one task enabled when nothing configures maintenance): at most 27 loose objects in
    /// `objects/17` (6,700 / 256) and at most 50 packs. Whenever the configuration may change those
    /// settings (a `gc` or `maintenance` section, an include), git decides.
    var maintenanceOptions: [String] {
        guard !configurationMayMention(sections: ["gc", "maintenance"]), let gitDirectory = gitDirectory()
        else {
            return []
        }
        let objects = gitDirectory + "/objects"
        // A folder git has not made yet holds nothing; one that cannot be read leaves it to git.
        func names(_ folder: String) -> [String]? {
            FileSystem.kind(folder) == .missing ? [] : try? FileSystem.contents(of: folder, sorted: false)
        }
        guard let loose = names(objects + "/17"), let packs = names(objects + "/pack") else { return [] }
        let hex = Set("0123456789abcdef".utf8)
        let looseObjects = loose.filter { name in
            (name.utf8.count == 38 || name.utf8.count == 62) && name.utf8.allSatisfy(hex.contains)
        }
        guard looseObjects.count <= 27, packs.filter({ $0.hasSuffix(".pack") }).count <= 50 else { return [] }
        return ["-c", "maintenance.auto=false"]
    }

    /// Whether git's configuration could mention any of `words` or set anything in one of `sections`
    /// (lower case): `false` only when none of the files git reads (the repository's, the user's, the
    /// system's) contains one of the words or an include, or one of the sections' headers (`[gc]`,
    /// `[gc "..."]`, `[gc.x]`), and no `GIT_CONFIG*` variable (but `GIT_CONFIG_NOSYSTEM`) changes which
    /// files or settings those are. Saves a git process where the answer would be git's default.
    func configurationMayMention(_ words: [String] = [], sections: [String] = []) -> Bool {
        let environment = baseEnvironment ?? StoreConfiguration.processEnvironment()
        // GIT_CONFIG_NOSYSTEM only leaves out the system's file; every other GIT_CONFIG* variable can
        // add settings or move files.
        if environment.keys.contains(where: { $0.hasPrefix("GIT_CONFIG") && $0 != "GIT_CONFIG_NOSYSTEM" }) {
            return true
        }
        let system =
            ["", "0", "false", "no", "off"].contains(environment["GIT_CONFIG_NOSYSTEM"]?.lowercased() ?? "")
            ? ["/etc/gitconfig"] : []
        guard let gitDirectory = gitDirectory(), FileSystem.isDirectory(gitDirectory),
            FileSystem.kind(gitDirectory + "/commondir") == .missing
        else { return true }
        let home = environment["HOME"] ?? ""
        let xdg = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.config"
        let files =
            [
                gitDirectory + "/config", gitDirectory + "/config.worktree", xdg + "/git/config",
                home + "/.gitconfig",
            ] + system
        return files.contains { file in
            guard FileSystem.kind(file) != .missing else { return false }
            guard let bytes = try? FileSystem.readFile(file) else { return true }
            let text = String(decoding: bytes, as: UTF8.self).lowercased()
            if (words + ["include"]).contains(where: { text.contains($0) }) { return true }
            // Every '[' counts, not only at the start of a line: git reads `[core][gc]` as two headers,
            // and a byte-order mark before the first one. A value that happens to hold `[gc]` only costs
            // the saving.
            return text.split(separator: "[", omittingEmptySubsequences: false).dropFirst().contains { rest in
                sections.contains(String(rest.prefix { !"] \t.\"".contains($0) }))
            }
        }
    }
}
