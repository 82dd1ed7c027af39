extension Base32 {
    /// RFC 4648's alphabet, in which authenticator apps show one-time password secrets.
    package static let standard = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
    /// z-base-32, the alphabet GnuPG names its socket folders with.
    package static let zBase32 = Array("ybndrfg8ejkmcpqxot1uwisza345h769")

    /// `bytes` as base32 in `alphabet` (32 characters), 5 bits a character, without padding: the last
    /// character is filled with zero bits.
    package static func encode(_ bytes: [UInt8], alphabet: [Character] = standard) -> String {
        var text = ""
        var bits = 0
        var value = 0
        for byte in bytes {
            value = (value << 8 | Int(byte)) & 0xffff
            bits += 8
            while bits >= 5 {
                bits -= 5
                text.append(alphabet[(value >> bits) & 31])
            }
        }
        if bits > 0 { text.append(alphabet[(value << (5 - bits)) & 31]) }
        return text
    }
}
