#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The `group` definitions of the user's `gpg.conf`, which pass expands when it compares keys.
struct GPGGroups: Sendable {
    private var groups: [String: [String]] = [:]

    /// Reads `gpg.conf` from `homeDirectory`, else `GNUPGHOME`, else `~/.gnupg`; no file means no groups.
    static func load(homeDirectory: String?) -> GPGGroups {
        guard let home = GPGOptions.gnupgHome(homeDirectory),
            let bytes = try? FileSystem.readFile(home.path + "/gpg.conf")
        else { return GPGGroups() }
        return GPGGroups(parsing: String(decoding: bytes, as: UTF8.self))
    }

    /// Parses `group NAME = MEMBER...` lines; later lines for the same name add members.
    init(parsing text: String = "") {
        for rawLine in text.split(separator: "\n") {
            let line = rawLine.drop(while: { $0 == " " || $0 == "\t" })
            guard line.hasPrefix("group"), let equals = line.firstIndex(of: "=") else { continue }
            let head = line[line.index(line.startIndex, offsetBy: 5)..<equals]
            guard head.first == " " || head.first == "\t" else { continue }
            let name = String(head.split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
            let members = line[line.index(after: equals)...]
                .split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            guard !name.isEmpty else { continue }
            groups[name, default: []] += members
        }
    }

    /// The members of the group `name`, or `nil` when there is no such group.
    func members(of name: String) -> [String]? { groups[name] }
}

/// One variable of the process environment.
func environmentValue(_ name: String) -> String? {
    getenv(name).map { String(cString: $0) }
}
