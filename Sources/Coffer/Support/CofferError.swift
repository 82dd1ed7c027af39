#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An error raised by the store, the keychain or the command line, with a message a person can act on.
///
/// Compare errors by ``code``; show ``message`` to people. Messages never contain secrets.
public struct CofferError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure, stable across releases.
    public struct Code: RawRepresentable, Hashable, Sendable {
        /// The code's name.
        public let rawValue: String
        /// Creates a code from its name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The entry, account or folder does not exist.
        public static let notFound = Code(rawValue: "notFound")
        /// The entry already exists and overwriting was not allowed.
        public static let alreadyExists = Code(rawValue: "alreadyExists")
        /// A name tried to leave the store (`..`) or is otherwise unusable as a path.
        public static let invalidName = Code(rawValue: "invalidName")
        /// No `.gpg-id` names the recipients for this part of the store.
        public static let noRecipients = Code(rawValue: "noRecipients")
        /// A `.gpg-id` signature is missing or does not verify.
        public static let badSignature = Code(rawValue: "badSignature")
        /// A file-system operation failed.
        public static let io = Code(rawValue: "io")
        /// A git command failed.
        public static let git = Code(rawValue: "git")
        /// A value could not be encoded into or decoded from the entry format.
        public static let format = Code(rawValue: "format")
        /// The store's git repository is in the middle of a rebase, merge, cherry-pick or revert, so
        /// nothing was changed.
        public static let gitOperationUnfinished = Code(rawValue: "gitOperationUnfinished")
        /// The store is not a git repository.
        public static let notAGitRepository = Code(rawValue: "notAGitRepository")
        /// Another process holds the store's write lock.
        public static let locked = Code(rawValue: "locked")
        /// The request itself is malformed (bad length, bad option value, ...).
        public static let invalidArgument = Code(rawValue: "invalidArgument")
        /// A move or copy names the same file as source and destination (``CofferError/paths`` holds both).
        public static let sameFile = Code(rawValue: "sameFile")
        /// A folder would be moved or copied into itself (``CofferError/paths``: the folder, the destination).
        public static let intoItself = Code(rawValue: "intoItself")
        /// `sync` met a change it cannot merge; nothing was changed (``CofferError/paths``: the file).
        public static let cannotMerge = Code(rawValue: "cannotMerge")
        /// A folder's `.gpg-id` names a key the user has not accepted for that folder, so nothing was
        /// encrypted to it (``CofferError/paths``: the folder).
        public static let notAccepted = Code(rawValue: "notAccepted")
    }

    /// The kind of failure.
    public let code: Code
    /// A one-line description for people.
    public let message: String
    /// The files the error is about (empty when it is about none).
    public let paths: [String]
    /// The system's error number, when a system call failed.
    public let errno: Errno?
    /// The exit status of the program that failed (git), when one did.
    public let exitStatus: Int32?

    /// Creates an error of `code` described by `message`, about `paths`, with the system's error number
    /// or a failed program's exit status when there is one.
    public init(
        _ code: Code, _ message: String, paths: [String] = [], errno: Errno? = nil, exitStatus: Int32? = nil
    ) {
        self.code = code
        self.message = message
        self.paths = paths
        self.errno = errno
        self.exitStatus = exitStatus
    }

    /// A failed system call: `WHAT PATH: REASON` (`cannot open /x: No such file or directory`).
    package init(_ code: Code, _ what: String, path: String? = nil, errno number: Int32) {
        let reason = Errno(rawValue: number)
        self.init(
            code, path.map { "\(what) \($0): \(reason)" } ?? "\(what): \(reason)",
            paths: path.map { [$0] } ?? [],
            errno: reason)
    }

    /// The message.
    public var description: String { message }
}

/// A system error number (`errno`), described as the C library describes it.
public struct Errno: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The number.
    public let rawValue: Int32

    /// The error number `rawValue`.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// `strerror`'s words for it (`No such file or directory`).
    public var description: String { String(cString: strerror(rawValue)) }

    /// No such file or directory.
    public static let noSuchFileOrDirectory = Errno(rawValue: ENOENT)
    /// Permission denied.
    public static let permissionDenied = Errno(rawValue: EACCES)
    /// File exists.
    public static let fileExists = Errno(rawValue: EEXIST)
    /// No space left on device.
    public static let noSpace = Errno(rawValue: ENOSPC)
    /// File name too long.
    public static let nameTooLong = Errno(rawValue: ENAMETOOLONG)
    /// Broken pipe.
    public static let brokenPipe = Errno(rawValue: EPIPE)
}
