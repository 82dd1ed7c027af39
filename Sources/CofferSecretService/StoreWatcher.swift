import Coffer

#if canImport(Glibc)
    import Glibc
#endif

/// Watches the store's `secret-service/` folders with inotify, so that entries another program (pass, a
/// `sync`, another coffer) adds, changes or removes reach the provider's index.
final class StoreWatcher {
    /// The inotify descriptor to poll, `nil` when inotify is not available.
    let descriptor: Int32?
    /// The folder of the collections.
    private let top: String
    /// The store's root (watched until the collections' folder exists).
    private let storeRoot: String
    /// The watched folders by watch descriptor.
    private var watches: [Int32: String] = [:]

    /// What changes are watched for.
    private static let mask = UInt32(
        IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_ATTRIB)

    /// A watcher of `root` (the collections' folder) and its subfolders.
    init(root: String, storeRoot: String) {
        #if os(Linux)
            let made = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
            descriptor = made >= 0 ? made : nil
        #else
            descriptor = nil
        #endif
        top = root
        self.storeRoot = storeRoot
        addWatches()
    }

    deinit {
        if let descriptor { close(descriptor) }
    }

    /// Watches the store's root, the collections' folder and every collection folder not yet watched.
    private func addWatches() {
        guard let descriptor else { return }
        var folders = [storeRoot, top]
        if let names = try? FileSystem.contents(of: top) {
            folders += names.filter { $0.utf8.first != UInt8(ascii: ".") }.map { top + "/" + $0 }.filter(
                FileSystem.isDirectory)
        }
        for folder in folders where !watches.values.contains(folder) {
            let watch = inotify_add_watch(descriptor, folder, Self.mask)
            if watch >= 0 { watches[watch] = folder }
        }
    }

    /// Reads the pending events; `true` when one concerns the collections (the index must be read again).
    func drain() -> Bool {
        guard let descriptor else { return false }
        var changed = false
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            var offset = 0
            while offset + 16 <= count {
                let (watch, length, name) = buffer.withUnsafeBytes { raw -> (Int32, Int, String) in
                    let watch = raw.loadUnaligned(fromByteOffset: offset, as: Int32.self)
                    let length = Int(raw.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    let nameBytes = raw[(offset + 16)..<min(count, offset + 16 + length)].prefix { $0 != 0 }
                    return (watch, length, String(decoding: nameBytes, as: UTF8.self))
                }
                offset += 16 + length
                guard let folder = watches[watch] else { continue }
                // In the store's root only the collections' folder matters; in git's temporary files nothing.
                if folder == storeRoot && name != ItemStore.folder { continue }
                if name.utf8.first == UInt8(ascii: ".") && name != ItemStore.collectionEntry + ".gpg" {
                    continue
                }
                changed = true
            }
        }
        if changed {
            watches = watches.filter { FileSystem.isDirectory($0.value) }
            addWatches()
        }
        return changed
    }
}
