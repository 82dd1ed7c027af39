// A small program using Coffer's Keychain: stores a Codable value and a password, reads them back.
// It uses the store pass would use (PASSWORD_STORE_DIR, GNUPGHOME), so run it after `coffer init`.
import Coffer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

struct Credentials: Codable, Equatable {
    var username: String
    var password: String
    var port: Int
    var tags: [String]
}

do {
    let keychain = try Keychain(service: "com.example.app")
    let credentials = Credentials(username: "alice", password: "s3cr3t-pw", port: 8443, tags: ["prod", "eu"])
    try keychain.set(credentials, account: "alice")
    try keychain.set("hunter2", account: "bob")

    let loaded = try keychain.value(Credentials.self, account: "alice")
    print("value(Credentials.self, account: \"alice\") == stored: \(loaded == credentials)")
    print("password(account: \"bob\"): \(try keychain.password(account: "bob") ?? "nil")")
    print("password(account: \"carol\"): \(try keychain.password(account: "carol") ?? "nil")")
    print("accounts(): \(try keychain.accounts())")
} catch {
    let message = "keychain-example: \(error)\n"
    _ = message.withCString { write(2, $0, strlen($0)) }
    exit(1)
}
