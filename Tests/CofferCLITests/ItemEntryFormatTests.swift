import Coffer
import CofferSecretService
import CofferTestSupport
import Testing

/// The Secret Service's entry format in-process: what the provider writes over an entry it reads back
/// as written, whatever lines a person left in it.
@Suite("Secret Service entries: a rewrite reads back as written")
struct ItemEntryFormatTests {
    /// Hand lines that spell the provider's own keys with blanks, which the field reader drops.
    static let handLines = [
        "secret-encoding : base64", "secret-encoding\t: base64", " secret-encoding: base64", "label : old",
        "label\t:old", " label: old", "type :  old", "created : 1", "modified :2", "content-type : x/old",
        "note: keep me", "Label: stays (another key)",
    ]

    @Test(
        "a rewritten secret and its metadata read back as written, beside any hand line", arguments: handLines
    )
    func rewriteReadsBack(_ hand: String) throws {
        let old = SecureBytes(Array("Zm9vYmFy\n\(hand)\n".utf8))
        var metadata = ItemMetadata(label: "new", attributes: ["service": "web"], created: 5)
        metadata.modified = 6
        for secret in ["Zm9vYmFy", "two\nlines", "bin\u{0}ary"] {
            let text = ItemStore.entryText(
                secret: SecureBytes(Array(secret.utf8)), metadata: metadata,
                keeping: ItemStore.foreignLines(old))
            let read = ItemStore.parse(text, name: "x")
            #expect(read.secret.bytes == Array(secret.utf8), "\(hand): \(secret)")
            #expect(read.metadata.label == "new", "\(hand)")
            #expect(read.metadata.created == 5 && read.metadata.modified == 6, "\(hand)")
            #expect(read.metadata.contentType == metadata.contentType, "\(hand)")
            #expect(read.metadata.attributes == ["service": "web"], "\(hand)")
        }
        // A line that is not the provider's (no field at all when it starts with a blank) is kept.
        if hand.hasPrefix("note") || hand.hasPrefix("Label") || hand.hasPrefix(" ") {
            #expect(ItemStore.foreignLines(old) == [Array(hand.utf8)])
        }
    }
}
