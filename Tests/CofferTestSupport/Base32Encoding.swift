/// RFC 4648 base32 (upper case, no padding), as authenticator apps show one-time password secrets: the
/// tests make `otpauth://` URIs from random keys with it.
package func base32Encoded(_ bytes: [UInt8]) -> String {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
    var result = ""
    var buffer = 0
    var bits = 0
    for byte in bytes {
        buffer = (buffer << 8 | Int(byte)) & 0xFFFF
        bits += 8
        while bits >= 5 {
            result.append(alphabet[(buffer >> (bits - 5)) & 31])
            bits -= 5
        }
    }
    if bits > 0 { result.append(alphabet[(buffer << (5 - bits)) & 31]) }
    return result
}
