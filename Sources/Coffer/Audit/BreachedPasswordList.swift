#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An offline copy of Have I Been Pwned's Pwned Passwords in its downloadable SHA-1 form "ordered by
/// hash": one `HASH:COUNT` line per breached password, the hash as 40 upper-case hexadecimal digits,
/// the lines sorted by hash (CRLF or LF line ends).
///
/// The list is never loaded into memory. A file of up to ``wholeFileLimit`` bytes, or a pipe, is read once
/// from start to end, every line checked for its form and its order, and merged with the sorted hashes
/// asked for. A larger file (the full list is tens of gigabytes) is searched by bisection with `pread`, a
/// few hundred bytes per step. Then only what the search reads is checked: the first and the last line
/// (the file must end with a whole `HASH:COUNT` line, its newline optional, so a list cut short is an
/// error) and every line each step lands on, with the line after it, for their form and their order
/// (against each other and against the lines the search already passed). Lines the search skips are
/// not read, so a list out of order elsewhere (two sorted lists one after the other, say) can hide a
/// hash; only reading all of it, as a pipe is, checks every line. A line found not `HASH:COUNT` or out
/// of order is an error.
package struct BreachedPasswordList: Sendable {
    /// The file.
    package let path: String
    /// Files up to this size are read whole and checked line by line.
    package var wholeFileLimit = 64 << 20

    /// The list in `path`.
    package init(path: String) {
        self.path = path
    }

    /// Whether `path` is searched by bisection (a file bigger than ``wholeFileLimit``) rather than read
    /// whole, every line checked.
    package var isSearchedByBisection: Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        return info.st_mode & S_IFMT == S_IFREG && Int(info.st_size) > wholeFileLimit
    }

    /// Bytes read around each bisection step, and the longest line accepted.
    static let longestLine = 128
    /// Below this span the search reads the lines left in one go.
    static let scanSpan = 4096

    /// How often each hash (40 upper-case hexadecimal ASCII digits) was seen, `nil` for those not in the
    /// list, in the order of `hashes`.
    package func counts(of hashes: [[UInt8]]) throws -> [Int?] {
        let descriptor = try SystemCall.open(path, O_RDONLY)
        defer { SystemCall.close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw CofferError(.io, "cannot read", path: path, errno: errno)
        }
        if info.st_mode & S_IFMT == S_IFDIR {
            throw CofferError(.io, "cannot read", path: path, errno: EISDIR)
        }
        let order = hashes.indices.sorted { hashes[$0].lexicographicallyPrecedes(hashes[$1]) }
        let isRegular = info.st_mode & S_IFMT == S_IFREG
        if !isRegular || Int(info.st_size) <= wholeFileLimit {
            return try merge(descriptor, hashes, order)
        }
        return try bisect(descriptor, size: Int(info.st_size), hashes, order)
    }

    // MARK: Errors

    private func malformed(_ where: String) -> CofferError {
        CofferError(
            .format,
            "\(path): \(`where`) is not HASH:COUNT (40 upper-case hexadecimal digits of a SHA-1 hash, a colon, "
                + "a count); give Have I Been Pwned's SHA-1 list ordered by hash",
            paths: [path])
    }

    private func unsorted(_ where: String) -> CofferError {
        CofferError(
            .format,
            "\(path): \(`where`) is out of order; the list must be sorted by hash (Have I Been Pwned's SHA-1 list "
                + "ordered by hash)",
            paths: [path])
    }

    /// A line without its end: its hash and count, or `nil` when it is not `HASH:COUNT`.
    static func parse(_ line: ArraySlice<UInt8>) -> (hash: ArraySlice<UInt8>, count: Int)? {
        var line = line
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        guard line.count > 41, line.count <= longestLine else { return nil }
        let hash = line.prefix(40)
        for byte in hash {
            guard
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
            else { return nil }
        }
        guard line[line.startIndex + 40] == UInt8(ascii: ":") else { return nil }
        let digits = line.dropFirst(41)
        guard !digits.isEmpty, digits.count <= 18 else { return nil }
        var count = 0
        for byte in digits {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            count = count * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return (hash, count)
    }

    /// Whether `byte` can be part of a `HASH:COUNT` line (its line end included).
    static func isLineByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
            || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "\r")
    }

    // MARK: Reading it all

    /// One pass over the whole file, checking every line, merged with the sorted hashes.
    private func merge(_ descriptor: Int32, _ hashes: [[UInt8]], _ order: [Int]) throws -> [Int?] {
        var results = [Int?](repeating: nil, count: hashes.count)
        var next = 0
        var previous: [UInt8]?
        var lineNumber = 0
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        func take(_ line: ArraySlice<UInt8>) throws {
            lineNumber += 1
            guard let (hash, count) = Self.parse(line) else { throw malformed("line \(lineNumber)") }
            if let previous, !previous.lexicographicallyPrecedes(hash) {
                throw unsorted("line \(lineNumber)")
            }
            while next < order.count, hashes[order[next]].lexicographicallyPrecedes(hash) { next += 1 }
            while next < order.count, hashes[order[next]].elementsEqual(hash) {
                results[order[next]] = count
                next += 1
            }
            previous = Array(hash)
        }
        while true {
            let count = try chunk.withUnsafeMutableBytes {
                try SystemCall.read(descriptor, into: $0, path: path)
            }
            if count == 0 { break }
            var start = 0
            for index in 0..<count where chunk[index] == UInt8(ascii: "\n") {
                if pending.isEmpty {
                    try take(chunk[start..<index])
                } else {
                    pending += chunk[start..<index]
                    try take(pending[...])
                    pending.removeAll(keepingCapacity: true)
                }
                start = index + 1
            }
            pending += chunk[start..<count]
            if pending.count > Self.longestLine { throw malformed("line \(lineNumber + 1)") }
        }
        if !pending.isEmpty { try take(pending[...]) }
        if lineNumber == 0 { throw CofferError(.format, "\(path): the list is empty", paths: [path]) }
        return results
    }

    // MARK: Bisection

    /// Searches each hash by bisection over byte offsets, in hash order (each search starts where the
    /// previous one ended).
    private func bisect(_ descriptor: Int32, size: Int, _ hashes: [[UInt8]], _ order: [Int]) throws -> [Int?]
    {
        var results = [Int?](repeating: nil, count: hashes.count)
        func read(_ offset: Int, _ length: Int) throws -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: length)
            let count = try bytes.withUnsafeMutableBytes {
                try SystemCall.read(descriptor, into: $0, at: offset, path: path)
            }
            return Array(bytes[0..<count])
        }
        /// The first line that starts at or after `offset` (the end of the line it lands in must be made
        /// of what a line's end can hold).
        func lineStart(atOrAfter offset: Int) throws -> Int {
            if offset == 0 { return 0 }
            let bytes = try read(offset - 1, Self.longestLine + 1)
            guard let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) else {
                if offset - 1 + bytes.count >= size { return size }
                throw malformed("the line around byte \(offset)")
            }
            for byte in bytes[..<newline] where !Self.isLineByte(byte) {
                throw malformed("the line around byte \(offset)")
            }
            return offset + newline
        }
        /// The line starting at `offset`: its hash, count, and where the next one starts. The line after
        /// it (which the same read holds whole when it is no longer than ``longestLine``) is checked too,
        /// and must come after it.
        func line(at offset: Int) throws -> (hash: [UInt8], count: Int, next: Int) {
            let bytes = try read(offset, 2 * (Self.longestLine + 1))
            let end = bytes.firstIndex(of: UInt8(ascii: "\n"))
            guard end != nil || offset + bytes.count >= size,
                let (hash, count) = Self.parse(bytes[..<(end ?? bytes.count)])
            else { throw malformed("the line at byte \(offset)") }
            let next = offset + (end.map { $0 + 1 } ?? bytes.count)
            if let end, end + 1 < bytes.count {
                let after = bytes[(end + 1)...]
                // Without a line feed in the rest of the read, the next line is the last one or too long.
                let afterEnd = after.firstIndex(of: UInt8(ascii: "\n"))
                guard let (nextHash, _) = Self.parse(after[..<(afterEnd ?? bytes.count)]) else {
                    throw malformed("the line at byte \(next)")
                }
                if !hash.lexicographicallyPrecedes(nextHash) {
                    throw unsorted("the line at byte \(next)")
                }
            }
            return (Array(hash), count, next)
        }
        // The ends: the first line, and a last line that is whole (a list cut short ends mid-line), in
        // order.
        let first = try line(at: 0)
        let tailLength = min(size, Self.longestLine + 2)
        var tail = try read(size - tailLength, tailLength)[...]
        if tail.last == UInt8(ascii: "\n") { tail.removeLast() }
        let lastStart = tail.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 }
        guard lastStart != nil || tailLength == size,
            let (lastHash, _) = Self.parse(tail[(lastStart ?? 0)...])
        else {
            throw malformed("the last line (the list may be cut short)")
        }
        if first.next <= size - tailLength + (lastStart ?? 0), !first.hash.lexicographicallyPrecedes(lastHash)
        {
            throw unsorted("the last line")
        }
        var floor = 0
        var floorHash: [UInt8]?
        for index in order {
            let target = hashes[index]
            // Every line that starts before `low` is below the target, every one from `high` on is not.
            var low = floor
            var lowHash = floorHash
            var high = size
            var highHash: [UInt8]?
            while high - low > Self.scanSpan {
                let middle = low + (high - low) / 2
                let start = try lineStart(atOrAfter: middle)
                if start >= high {
                    high = middle
                    continue
                }
                let found = try line(at: start)
                if let lowHash, !lowHash.lexicographicallyPrecedes(found.hash) {
                    throw unsorted("the line at byte \(start)")
                }
                if let highHash, highHash.lexicographicallyPrecedes(found.hash) {
                    throw unsorted("the line at byte \(start)")
                }
                if found.hash.lexicographicallyPrecedes(target) {
                    low = found.next
                    lowHash = found.hash
                } else {
                    high = start
                    highHash = found.hash
                }
            }
            floor = low
            floorHash = lowHash
            // The lines left: read together, each checked, up to the first one not below the target.
            let block = try read(low, min(size, high + Self.longestLine + 1) - low)
            var position = 0
            var previous = lowHash
            while position < block.count && low + position <= high {
                let end = block[position...].firstIndex(of: UInt8(ascii: "\n"))
                guard end != nil || low + block.count >= size,
                    let (hash, count) = Self.parse(block[position..<(end ?? block.count)])
                else { throw malformed("the line at byte \(low + position)") }
                if let previous, !previous.lexicographicallyPrecedes(hash) {
                    throw unsorted("the line at byte \(low + position)")
                }
                if hash.elementsEqual(target) {
                    results[index] = count
                    break
                }
                if target.lexicographicallyPrecedes(hash) { break }
                previous = Array(hash)
                position = (end ?? block.count) + 1
            }
        }
        return results
    }
}
