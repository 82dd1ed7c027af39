/// The rules for entry names, shared by the store, the keychain and the command line.
public enum EntryName {
    /// Whether `name` is what pass calls a sneaky path: it climbs out with `..`.
    ///
    /// pass refuses arguments matching `/..$`, `^../`, `/../` or `^..$`.
    public static func isSneaky(_ name: String) -> Bool {
        name == ".." || name.hasPrefix("../") || name.hasSuffix("/..") || name.contains("/../")
    }

    /// Checks a name given to the store; throws ``CofferError/Code/invalidName`` with pass's message.
    public static func validate(_ name: String) throws {
        if isSneaky(name) {
            throw CofferError(.invalidName, "You've attempted to pass a sneaky path to pass. Go home.")
        }
        if name.utf8.contains(0) {
            throw CofferError(.invalidName, "entry names cannot contain a NUL byte")
        }
    }

    /// A name with any trailing slashes removed (`web/` is the folder `web`).
    static func trimmed(_ name: String) -> String {
        var name = name
        while name.hasSuffix("/") { name.removeLast() }
        return name
    }
}
