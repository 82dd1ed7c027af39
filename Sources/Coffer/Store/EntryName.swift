/// The rules for entry names, shared by the store, the keychain and the command line.
package enum EntryName {
    /// Whether `name` is what pass calls a sneaky path: it climbs out with `..`.
    ///
    /// pass refuses arguments matching `/..$`, `^../`, `/../` or `^..$`.
    package static func isSneaky(_ name: String) -> Bool {
        // Those four patterns are a part equal to `..`. By bytes: a `/` joined to a combining character
        // is still a `/` for the kernel.
        name.utf8.split(separator: 0x2F, omittingEmptySubsequences: false).contains {
            $0.elementsEqual("..".utf8)
        }
    }

    /// Checks a name given to the store; throws ``CofferError/Code/invalidName`` with pass's message.
    package static func validate(_ name: String) throws {
        if isSneaky(name) {
            throw CofferError(.invalidName, "You've attempted to pass a sneaky path to pass. Go home.")
        }
        if !slashesStandAlone(name) {
            throw CofferError(
                .invalidName,
                "entry names cannot join a '/' to a combining character (\(Quoting.quoted(name)))")
        }
        if name.utf8.contains(0) {
            throw CofferError(.invalidName, "entry names cannot contain a NUL byte")
        }
    }

    /// Whether every `/` of `name` is a character of its own, as Swift reads text: a combining
    /// character after it (U+200D, U+0301) or a prepended one before it (U+0600) joins it into one
    /// character, which text operations would not see as a `/` while the kernel does.
    package static func slashesStandAlone(_ name: String) -> Bool {
        name.utf8.filter { $0 == 0x2F }.count == name.filter { $0 == "/" }.count
    }

    /// Whether `text` can be one part of an entry name taken from outside (a host, a username): not
    /// empty, not `.` or `..`, no `/` and no control character.
    package static func isPlainPart(_ text: String) -> Bool {
        !text.isEmpty && text != "." && text != ".." && !text.utf8.contains(0x2F)
            && !text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7f })
    }

    /// Checks a name the store is about to create: besides ``validate(_:)``, no control characters
    /// (a newline in a file name breaks every tool that reads names line by line) and no component
    /// longer than the 255 bytes a file name may have.
    package static func validateNew(_ name: String) throws {
        try validate(name)
        // git's own folder is no place for entries: a folder `.git` inside the store makes a repository
        // of its own there, and files written into the store's `.git` are git's configuration.
        if name.pathParts.contains(where: { $0.lowercased() == ".git" }) {
            throw CofferError(.invalidName, "entry names cannot have a part named .git (git's own folder)")
        }
        // C0 and C1 controls (U+009B is a terminal's escape too), line and paragraph separators, and
        // the controls that reorder what a terminal shows.
        if name.utf8.contains(where: { $0 < 0x20 || $0 == 0x7f })
            || name.unicodeScalars.contains(where: { scalar in
                (0x80...0x9f).contains(scalar.value)
                    || [0x61c, 0x200e, 0x200f, 0x2028, 0x2029].contains(scalar.value)
                    || (0x202a...0x202e).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
            })
        {
            throw CofferError(
                .invalidName, "entry names cannot contain a control character (newline, tab, ...)")
        }
        for component in name.utf8.split(separator: UInt8(ascii: "/")) where component.count + 4 > 255 {
            throw CofferError(
                .invalidName,
                "a part of an entry name is longer than 251 bytes (255 with .gpg): "
                    + String(decoding: component.prefix(16), as: UTF8.self) + "...")
        }
    }

    /// Whether `name` means the store's root folder itself (`""`, `.`, `./`, `/`), which nothing may
    /// remove, move or copy.
    package static func isStoreRoot(_ name: String) -> Bool {
        name.pathParts.allSatisfy { $0 == "." }
    }

    /// Whether the last part of `name` is `.` (`web/.`, `./`), a folder `rm` and `mv` refuse to touch.
    package static func endsInDot(_ name: String) -> Bool {
        name.pathParts.last == "."
    }

    /// A name with any trailing slashes removed (`web/` is the folder `web`).
    static func trimmed(_ name: String) -> String { name.withoutTrailingSlashes }
}
