import Coffer

/// RFC 4648 base32 (upper case, no padding), as authenticator apps show one-time password secrets: the
/// tests make `otpauth://` URIs from random keys with it.
package func base32Encoded(_ bytes: [UInt8]) -> String {
    Base32.encode(bytes)
}
