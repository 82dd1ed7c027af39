/// Something a store operation did to the file system, reported as it happens.
///
/// The command line prints these as pass's coreutils calls (`mkdir -v`, `mv -v`, `cp -v`, `rm -v`) do;
/// paths are spelled as pass spells them.
public enum StoreEvent: Sendable, Equatable {
    /// A folder was created.
    case createdFolder(String)
    /// A file was removed.
    case removedFile(String)
    /// A folder was removed.
    case removedFolder(String)
    /// A file or folder was renamed.
    case renamed(from: String, to: String)
    /// A file was copied, or a folder created as a copy.
    case copied(from: String, to: String)
    /// An entry was re-encrypted to the listed subkey ids.
    case reencrypted(name: String, keyIDs: [String])
    /// `init` wrote a `.gpg-id` for these recipients (in `subfolder`, empty for the root).
    case initialized(recipients: [String], subfolder: String)
    /// An entry nobody asked to re-encrypt was left encrypted for fewer keys than its `.gpg-id` names:
    /// `keys` (`FINGERPRINT "user id"`) are not accepted for its folder (see SECURITY.md).
    case leftNarrow(NarrowEntry)
}
