import Coffer

/// `show --json`: an entry as one JSON object, for scripts:
///
/// ```json
/// {"name": "web/site", "password": "hunter2", "fields": {"login": "alice", "url": ["a", "b"]}, "text": "..."}
/// ```
///
/// `fields` holds each key once (spelled as its first occurrence; keys are compared ignoring case), its
/// value a string, or an array of strings when the key repeats; `text` is the whole decrypted entry.
///
/// No byte is ever changed. An entry that is not UTF-8 has no exact text, so `password`, `fields` and
/// `text` are `null` and `textBase64` holds the whole entry in standard base64 (RFC 4648, padded):
///
/// ```json
/// {"name": "keys/blob", "password": null, "fields": null, "text": null, "textBase64": "cGH/c3MK"}
/// ```
///
/// `textBase64` is there only then. (When the whole entry is UTF-8, so is each part of it: lines, keys
/// and values are split at ASCII bytes.)
enum EntryJSON {
    /// The object and a newline, as bytes (the caller wipes them).
    static func render(name: String, contents: SecureBytes) -> [UInt8] {
        var bytes = contents.withUnsafeBytes { Array($0) }
        defer { bytes.withUnsafeMutableBytes { wipeMemory($0.baseAddress, count: $0.count) } }
        var output = Array("{\"name\": ".utf8) + quoted(Array(name.utf8))
        guard isUTF8(bytes) else {
            output += Array(", \"password\": null, \"fields\": null, \"text\": null, \"textBase64\": \"".utf8)
            output += Array(SecretBase64.encode(bytes).utf8)
            output += Array("\"}\n".utf8)
            return output
        }
        let secret = Secret(parsing: bytes)
        output += Array(", \"password\": ".utf8) + quoted(secret.passwordBytes)
        output += Array(", \"fields\": {".utf8)
        for (index, entry) in secret.groupedFields.enumerated() {
            if index > 0 { output += Array(", ".utf8) }
            output += quoted(Array(entry.key.utf8)) + Array(": ".utf8)
            if entry.values.count == 1 {
                output += quoted(Array(entry.values[0].utf8))
            } else {
                output += [UInt8(ascii: "[")]
                output += entry.values.map { quoted(Array($0.utf8)) }.joined(separator: Array(", ".utf8))
                output += [UInt8(ascii: "]")]
            }
        }
        output += Array("}, \"text\": ".utf8) + quoted(bytes) + Array("}\n".utf8)
        return output
    }

    /// Whether `bytes` are UTF-8 throughout.
    static func isUTF8(_ bytes: [UInt8]) -> Bool {
        String(validating: bytes, as: UTF8.self) != nil
    }

    /// A JSON string: quotes, backslashes, C0 and C1 control characters and U+2028/U+2029 escaped, other
    /// text as UTF-8 (bytes that are not UTF-8 become U+FFFD, so callers that must keep every byte check
    /// ``isUTF8(_:)`` first).
    static func quoted(_ bytes: [UInt8]) -> [UInt8] {
        var output: [UInt8] = [UInt8(ascii: "\"")]
        for scalar in String(decoding: bytes, as: UTF8.self).unicodeScalars {
            switch scalar {
            case "\"": output += Array("\\\"".utf8)
            case "\\": output += Array("\\\\".utf8)
            case "\n": output += Array("\\n".utf8)
            case "\r": output += Array("\\r".utf8)
            case "\t": output += Array("\\t".utf8)
            // C1 controls (U+009B starts a terminal escape) and the line separators that JavaScript
            // takes for line ends are escaped too, so the output is safe on a terminal and in a script.
            case _
            where scalar.value < 0x20 || (0x7f...0x9f).contains(scalar.value)
                || scalar.value == 0x2028 || scalar.value == 0x2029:
                let hex = String(scalar.value, radix: 16)
                output += Array(("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).utf8)
            default: output += Array(String(scalar).utf8)
            }
        }
        output.append(UInt8(ascii: "\""))
        return output
    }
}
