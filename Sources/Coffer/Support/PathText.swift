/// Paths and entry names taken apart as the kernel takes them: at every `/` byte.
///
/// Swift compares and indexes `String` by grapheme clusters, and a `/` followed by a combining
/// character (U+200D, U+0301, ...) or preceded by a prepended one (U+0600) is one cluster with it: it
/// is no `/` for `hasPrefix`, `split` or `lastIndex(of:)`, while it is one for the kernel. A name like
/// `../<U+200D>x` would pass a check of its parts and open a file above the store. Every path
/// operation that looks for `/` goes through these.
extension String {
    /// The path up to its last `/` (`"."` when there is none, `"/"` for a path directly under the
    /// root), as `dirname` gives it for a path without trailing slashes.
    package var parentPath: String {
        guard let slash = utf8.lastIndex(of: 0x2F) else { return "." }
        if slash == utf8.startIndex { return "/" }
        return String(decoding: utf8[..<slash], as: UTF8.self)
    }

    /// What follows the last `/` (the whole path when there is none).
    package var lastPathPart: String {
        guard let slash = utf8.lastIndex(of: 0x2F) else { return self }
        return String(decoding: utf8[utf8.index(after: slash)...], as: UTF8.self)
    }

    /// The parts between `/` bytes, empty ones left out.
    package var pathParts: [String] {
        utf8.split(separator: 0x2F).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Whether this path is inside `folder` (starts with `folder` and a `/`), by bytes.
    package func isPath(inside folder: String) -> Bool {
        utf8.starts(with: folder.utf8 + [0x2F])
    }

    /// Whether the path ends in a `/` byte.
    package var endsWithSlash: Bool { utf8.last == 0x2F }

    /// Whether the path starts with a `/` byte.
    package var startsWithSlash: Bool { utf8.first == 0x2F }

    /// This path without the `prefix` it starts with and the `/` after it (`root/a/b` less `root` is
    /// `a/b`), by bytes.
    package func droppingPathPrefix(_ prefix: String) -> String {
        String(decoding: utf8.dropFirst(prefix.utf8.count + 1), as: UTF8.self)
    }

    /// The path without one trailing `/` (as it is when it ends in none).
    package var withoutLastSlash: String {
        endsWithSlash ? String(decoding: utf8.dropLast(), as: UTF8.self) : self
    }

    /// The path without its trailing `/` bytes.
    package var withoutTrailingSlashes: String {
        var bytes = Array(utf8)
        while bytes.last == 0x2F { bytes.removeLast() }
        return bytes.count == utf8.count ? self : String(decoding: bytes, as: UTF8.self)
    }
}

/// Tests on bytes that may or may not be text.
package enum TextBytes {
    /// Whether `bytes` is valid UTF-8 (a NUL byte is valid).
    package static func isValidUTF8(_ bytes: some Sequence<UInt8>) -> Bool {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }
}
