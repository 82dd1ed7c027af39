#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

// The archive decoder must reject or decode any entry without crashing, and what it decodes must
// encode again.
struct FuzzAddress: Codable, Equatable {
    var city: String
    var zip: Int?
}

struct FuzzRecord: Codable, Equatable {
    var password: String
    var login: String?
    var port: Int?
    var ratio: Double?
    var admin: Bool?
    var created: Date?
    var blob: Data?
    var site: URL?
    var tags: [String]?
    var address: FuzzAddress?
}

/// libFuzzer target: decodes arbitrary bytes as a record and as a dictionary.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzArchive(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let record = try? SecretDecoder().decode(FuzzRecord.self, from: bytes) {
        _ = try? SecretEncoder().encode(record)
    }
    _ = try? SecretDecoder().decode([String: String].self, from: bytes)
    return 0
}
