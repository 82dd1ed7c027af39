#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A Curve25519 encryption subkey packet body (version 4, ECDH, KDF SHA-256 and AES-128), for the
/// unwrapping of what the agent returns.
private let ecdhKey: KeyringKey = {
    let point = [0x40] + [UInt8](repeating: 9, count: 32)
    var body: [UInt8] = [4, 0x5f, 0, 0, 0, KeyringKey.ecdh, UInt8(KeyringKey.curve25519OID.count)]
    body += KeyringKey.curve25519OID + [0x01, 0x07] + point + [3, 1, 8, 7]
    return body.withUnsafeBytes { KeyringKey(packetBody: $0) }!
}()

/// libFuzzer target: gpg-agent's side of one decryption. The input is everything the agent says
/// (greeting, status and comment lines, `INQUIRE`, `D` lines with escapes, `OK`/`ERR`), fed
/// through a socket pair to the real connection; what it returns goes through the parsing of the
/// session key for both RSA and ECDH. Nothing may crash, and no more comes back than was sent.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAgent(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    // More than a socket buffer would block the single thread; the agent's answers are short.
    let size = min(size, 32_768)
    var pair: [Int32] = [-1, -1]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else { return 0 }
    defer { close(pair[1]) }
    var offset = 0
    while offset < size {
        let written = write(pair[1], data + offset, size - offset)
        guard written > 0 else { close(pair[0]); return 0 }
        offset += written
    }
    shutdown(pair[1], Int32(SHUT_WR))
    guard let connection = GPGAgentConnection(connected: pair[0]) else { return 0 }
    let request = Array("(7:enc-val(4:ecdh(1:s1:x)(1:e1:y)))".utf8)
    guard let result = connection.decrypt(keygrip: String(repeating: "0", count: 40), ciphertext: request)
    else {
        return 0
    }
    precondition(result.count <= size, "the connection returned more than the agent sent")
    let wrapped = [UInt8](repeating: 0xa6, count: 40)
    for algorithm in [KeyringKey.rsa, KeyringKey.ecdh] {
        if let key = DirectDecryption.sessionKey(
            fromAgentResult: result, algorithm: algorithm, key: ecdhKey, wrapped: wrapped)
        {
            // A session key is a cipher byte and an AES key.
            precondition([17, 25, 33].contains(key.count), "a session key of \(key.count) bytes")
        }
    }
    return 0
}
