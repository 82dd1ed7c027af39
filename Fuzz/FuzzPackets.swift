/// libFuzzer target: the OpenPGP packet reading of the in-process decryption (message shape,
/// decrypted data, literal packet) and the keyring readers (keybox and packet files) take any bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPackets(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    if let (sessionKeys, encrypted) = DirectDecryption.split(bytes) {
        precondition(!sessionKeys.isEmpty && encrypted.end == size, "a split message is malformed")
        for range in sessionKeys + encrypted.body { precondition(range.upperBound <= size) }
    }
    // Random bytes fail the integrity check; the literal packet reader is run on its own as well.
    precondition(DirectDecryption.opened(bytes) == nil || size >= 40)
    if let literal = DirectDecryption.literalData(bytes) { precondition(literal.count <= size) }
    let contents = Array(bytes)
    for indexed in [KeyringIndex.indexKeybox(contents), KeyringIndex.indexPackets(contents)] {
        let (keys, times) = (indexed.keys, indexed.times)
        for (keyID, found) in keys {
            for key in found {
                precondition(key.keyID == keyID)
                _ = key.keygrip
            }
        }
        // Every key's block has times (at least its keys' creation), and only indexed keys have them.
        precondition(times.keys.allSatisfy { keys[$0] != nil } && keys.keys.allSatisfy { times[$0] != nil })
        // A key block's primary key is named by its fingerprint.
        precondition(indexed.primaries.values.allSatisfy { $0.allSatisfy { $0.count == 20 } })
    }
    // What the encryption writes, the reader reads back.
    let body = Array(contents.prefix(9_000))
    let packet = DirectEncryption.packet(tag: 11, body: body)!
    let read = packet.withUnsafeBytes { PacketReader.packet(in: $0, at: 0) }
    precondition(read?.tag == 11 && read?.end == packet.count && read?.length == body.count)
    return 0
}
