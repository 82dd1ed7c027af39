/// One item of a listing: an entry, a folder or another file, with its children for folders.
///
/// Names are the on-disk names (entries keep their `.gpg`); children are in byte order, dotfiles left out,
/// and symlinks to folders are followed, each folder once (``PasswordStore/list(_:)``).
public struct StoreNode: Sendable, Equatable {
    /// What the item is.
    public enum Kind: Sendable, Equatable {
        /// A `.gpg` file.
        case entry
        /// A folder (or a symlink to one).
        case folder
        /// Any other file.
        case file
    }

    /// The on-disk name.
    public var name: String
    /// What the item is.
    public var kind: Kind
    /// Where the item points when it is a symlink.
    public var linkTarget: String?
    /// Whether the item is executable (shown in another colour by `tree`).
    public var isExecutable: Bool
    /// The items inside a folder.
    public var children: [StoreNode]

    /// Creates a node.
    public init(
        name: String, kind: Kind, linkTarget: String? = nil, isExecutable: Bool = false,
        children: [StoreNode] = []
    ) {
        self.name = name
        self.kind = kind
        self.linkTarget = linkTarget
        self.isExecutable = isExecutable
        self.children = children
    }

    /// The entry name shown to people: the on-disk name without `.gpg`.
    public var displayName: String {
        kind == .entry && name.hasSuffix(".gpg") ? String(name.dropLast(4)) : name
    }

    /// The entry names below this node, as `folder/name`, depth first.
    public func entryNames(prefix: String = "") -> [String] {
        children.flatMap { child -> [String] in
            switch child.kind {
            case .entry: return [prefix + child.displayName]
            case .folder: return child.entryNames(prefix: prefix + child.name + "/")
            case .file: return []
            }
        }
    }
}
