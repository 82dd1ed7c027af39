import Coffer
import CofferTestSupport

/// One file of a clone's work tree as the sync model sees it: the value markers in it and whether it
/// holds conflict markers. Entries (`*.gpg`) are decrypted, other files read as they are.
struct SyncModelItem: Sendable, Equatable {
    /// The text (decrypted for entries).
    var text: String
    /// The value markers in the text, in order.
    var markers: [String]
    /// Whether the text holds a conflict block (`<<<<<<<`, `=======`, `>>>>>>>`).
    var conflict: Bool
    /// Why the file could not be read, if it could not.
    var problem: String?
    /// The bytes (decrypted for entries).
    var bytes: [UInt8] = []
}

/// A clone's work tree: path (relative to the store) to item.
struct SyncModelSnapshot: Sendable {
    /// Every file outside `.git`.
    var items: [String: SyncModelItem] = [:]

    /// Every marker anywhere in the work tree.
    var markers: Set<String> { Set(items.values.flatMap(\.markers)) }

    /// The entry names (paths without `.gpg`) that decrypted.
    var entries: [String] {
        items.filter { $0.key.hasSuffix(".gpg") && $0.value.problem == nil }.keys.map {
            String($0.dropLast(4))
        }
        .sorted()
    }

    /// The paths of the files that are not entries (`.gpg-id` included).
    var otherFiles: [String] { items.keys.filter { !$0.hasSuffix(".gpg") }.sorted() }

    /// The markers in files Mallory did not plant.
    var honestMarkers: Set<String> {
        Set(items.filter { !SyncModelRun.isPlanted($0.key) }.values.flatMap(\.markers))
    }

    /// The markers held only in files Mallory planted: they may go when she overwrites or removes them.
    var plantedOnlyMarkers: Set<String> { markers.subtracting(honestMarkers) }

    /// The path holding `marker`, if any.
    func location(of marker: String) -> String? {
        items.first { $0.value.markers.contains(marker) }?.key
    }
}

/// What every clone wrote, what users deliberately overwrote or removed, and what each clone has seen:
/// the ground truth the checks compare the stores against.
///
/// A value may be missing from a store only when a user *destroyed* it: an operation that overwrote or
/// removed the very text holding it on a clone where it then was (so that user saw it), after which the
/// clone held it nowhere. Every other disappearance is a loss.
struct SyncModelLedger: Sendable {
    /// A value written by a command that succeeded.
    struct Write: Sendable {
        /// Which clone wrote it.
        let clone: Int
        /// The model step.
        let step: Int
        /// Where and what, for messages (`login of web/shop`).
        let what: String
    }

    /// A deliberate removal of a value by a user.
    struct Destruction: Sendable {
        /// The clone it happened on.
        let clone: Int
        /// The model step.
        let step: Int
    }

    /// Values written, by marker.
    private(set) var writes: [String: Write] = [:]
    /// Markers in the order they were written.
    private(set) var order: [String] = []
    /// Values users overwrote or removed, by marker.
    private(set) var destroyed: [String: Destruction] = [:]
    /// Values already reported lost (each is reported once), with the step that noticed.
    private(set) var lost: [String: Int] = [:]
    /// For each clone, the step at which it first held each marker.
    private(set) var firstSeen: [[String: Int]]

    /// A ledger for `clones` clones.
    init(clones: Int) {
        firstSeen = Array(repeating: [:], count: clones)
    }

    /// Records a value a successful command wrote.
    mutating func recordWrite(_ marker: String, clone: Int, step: Int, what: String) {
        guard writes[marker] == nil else { return }
        writes[marker] = Write(clone: clone, step: step, what: what)
        order.append(marker)
    }

    /// Records that a user on `clone` destroyed `marker` (only the first destruction counts).
    mutating func recordDestruction(_ marker: String, clone: Int, step: Int) {
        if destroyed[marker] == nil { destroyed[marker] = Destruction(clone: clone, step: step) }
    }

    /// Records what `clone` holds at `step`.
    mutating func recordSeen(_ markers: Set<String>, clone: Int, step: Int) {
        for marker in markers where firstSeen[clone][marker] == nil { firstSeen[clone][marker] = step }
    }

    /// Marks `marker` as lost at `step`; returns `false` when it was already reported.
    mutating func recordLoss(_ marker: String, step: Int) -> Bool {
        guard lost[marker] == nil else { return false }
        lost[marker] = step
        return true
    }

    /// Whether a value may be missing: a user destroyed it, or it was never recorded as written (a
    /// command that failed may or may not have written it).
    func mayBeMissing(_ marker: String) -> Bool {
        destroyed[marker] != nil || writes[marker] == nil
    }

    /// The values that must still be somewhere: written, not destroyed, not already reported lost.
    var required: [String] {
        order.filter { destroyed[$0] == nil && lost[$0] == nil }
    }

    /// A sentence about `marker`'s history, for a failure message.
    func story(of marker: String, cloneNames: [String]) -> String {
        var parts: [String] = []
        if let write = writes[marker] {
            parts.append("written by \(cloneNames[write.clone]) at step \(write.step) (\(write.what))")
        } else {
            parts.append("never recorded as written")
        }
        let holders = firstSeen.indices.compactMap { clone in
            firstSeen[clone][marker].map { "\(cloneNames[clone]) since step \($0)" }
        }
        if !holders.isEmpty { parts.append("held by " + holders.joined(separator: ", ")) }
        if let destruction = destroyed[marker] {
            parts.append("destroyed by \(cloneNames[destruction.clone]) at step \(destruction.step)")
        }
        return parts.joined(separator: "; ")
    }
}

/// Text helpers of the sync model: markers, conflict blocks, entry lines.
enum SyncModelText {
    /// The markers (`MARK-<tag>-<n>` in entries, `NOTE-<tag>-<n>` in other files) in `bytes`.
    static func markers(in bytes: [UInt8], tag: String) -> [String] {
        var found: [String] = []
        for prefix in ["MARK-\(tag)-", "NOTE-\(tag)-"] {
            let pattern = Array(prefix.utf8)
            var index = 0
            while index + pattern.count <= bytes.count {
                guard bytes[index] == pattern[0], Array(bytes[index..<(index + pattern.count)]) == pattern
                else {
                    index += 1
                    continue
                }
                var end = index + pattern.count
                while end < bytes.count, (48...57).contains(bytes[end]) { end += 1 }
                if end > index + pattern.count {
                    found.append(String(decoding: bytes[index..<end], as: UTF8.self))
                }
                index = end
            }
        }
        return found
    }

    /// The lines of `text` without the final newline's empty line.
    static func lines(_ text: String) -> [String] {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        return lines
    }

    /// `text` with every conflict block replaced by one of its sides (`pickOurs` decides per block), as a
    /// person resolving it in an editor would.
    static func resolved(_ text: String, pickOurs: () -> Bool) -> String {
        var output: [String] = []
        var ours: [String] = []
        var theirs: [String] = []
        var section = 0  // 0 outside, 1 ours, 2 theirs
        for line in lines(text) {
            if section == 0 && line.hasPrefix("<<<<<<<") {
                section = 1
            } else if section == 1 && line == "=======" {
                section = 2
            } else if section == 2 && line.hasPrefix(">>>>>>>") {
                output += pickOurs() ? ours : theirs
                ours = []
                theirs = []
                section = 0
            } else if section == 1 {
                ours.append(line)
            } else if section == 2 {
                theirs.append(line)
            } else {
                output.append(line)
            }
        }
        output += ours + theirs
        return output.map { $0 + "\n" }.joined()
    }

    /// The key of a `key: value` line, or `nil`.
    static func fieldKey(_ line: String) -> String? {
        guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else { return nil }
        let key = line[..<colon]
        guard key.allSatisfy({ $0.isLetter || $0.isNumber }) else { return nil }
        return String(key)
    }
}
