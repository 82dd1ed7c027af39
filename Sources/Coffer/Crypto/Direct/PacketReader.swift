/// Splits OpenPGP packets (RFC 4880 section 4.2): old and new headers, and partial body lengths.
enum PacketReader {
    /// One packet: its tag, the byte ranges of its body (several when the body comes in partial
    /// lengths) and the offset just after it.
    struct Packet {
        let tag: Int
        let body: [Range<Int>]
        let end: Int

        /// The body's length.
        var length: Int { body.reduce(0) { $0 + $1.count } }
    }

    /// The packet at `offset`, or `nil` when the bytes there are not a complete packet.
    static func packet(in bytes: UnsafeRawBufferPointer, at offset: Int) -> Packet? {
        guard offset < bytes.count, bytes[offset] & 0x80 != 0 else { return nil }
        let header = bytes[offset]
        var position = offset + 1
        if header & 0x40 == 0 {
            let tag = Int((header >> 2) & 0x0f)
            let lengthType = Int(header & 0x03)
            if lengthType == 3 {
                // Indeterminate length: the packet runs to the end of the data.
                return Packet(tag: tag, body: [position..<bytes.count], end: bytes.count)
            }
            let size = 1 << lengthType
            guard let length = bigEndian(bytes, at: position, size: size) else { return nil }
            position += size
            guard length <= bytes.count - position else { return nil }
            return Packet(tag: tag, body: [position..<(position + length)], end: position + length)
        }
        let tag = Int(header & 0x3f)
        var body: [Range<Int>] = []
        while true {
            guard position < bytes.count else { return nil }
            let first = Int(bytes[position])
            var length: Int
            var partial = false
            switch first {
            case 0..<192:
                length = first
                position += 1
            case 192..<224:
                guard position + 1 < bytes.count else { return nil }
                length = ((first - 192) << 8) + Int(bytes[position + 1]) + 192
                position += 2
            case 255:
                guard let value = bigEndian(bytes, at: position + 1, size: 4) else { return nil }
                length = value
                position += 5
            default:
                length = 1 << (first & 0x1f)
                partial = true
                position += 1
            }
            guard length <= bytes.count - position else { return nil }
            body.append(position..<(position + length))
            position += length
            if !partial { return Packet(tag: tag, body: body, end: position) }
        }
    }

    /// The unsigned big-endian number of `size` bytes at `offset`, or `nil` past the end.
    static func bigEndian(_ bytes: UnsafeRawBufferPointer, at offset: Int, size: Int) -> Int? {
        guard offset >= 0, size <= bytes.count - offset else { return nil }
        var value = 0
        for index in offset..<(offset + size) { value = value << 8 | Int(bytes[index]) }
        return value
    }

    /// An OpenPGP multiprecision integer at `offset`: its bytes (as written, without leading zero
    /// bits) and the offset after it.
    static func mpi(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> (value: Range<Int>, end: Int)? {
        guard let bits = bigEndian(bytes, at: offset, size: 2) else { return nil }
        let length = (bits + 7) / 8
        guard length <= bytes.count - offset - 2 else { return nil }
        return (offset + 2..<(offset + 2 + length), offset + 2 + length)
    }
}
