/// libFuzzer target: the entry parser must take any bytes and format them back unchanged.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEntry(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var secret = Secret(parsing: bytes)
    precondition(secret.formatted() == bytes, "parse/format round trip changed the bytes")
    _ = secret.password
    _ = secret.fields
    _ = secret.otpauthURIs
    _ = secret.field("login")
    if (try? secret.setField("login", "fuzz")) != nil {
        precondition(secret.field("login") == "fuzz", "setField did not take")
    }
    return 0
}
