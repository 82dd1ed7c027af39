/// libFuzzer target: the `.gpg-id` and gpg.conf group parsers take any bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGPGID(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    for id in GPGIDFile.parse(bytes) {
        precondition(!id.isEmpty && !id.contains("#") && !id.contains("\n"), "a parsed id is malformed")
    }
    let groups = GPGGroups(parsing: String(decoding: bytes, as: UTF8.self))
    _ = groups.members(of: "team")
    return 0
}
