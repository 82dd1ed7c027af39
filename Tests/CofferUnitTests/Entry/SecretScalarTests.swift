import CofferTestSupport
import Testing

@testable import Coffer

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

@Suite("Entry scalars: ISO 8601 dates and base64")
struct EntryScalarTests {
    @Test func base64MatchesTheRFCVectors() {
        let vectors = [
            ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ]
        for (plain, encoded) in vectors {
            #expect(SecretBase64.encode(Array(plain.utf8)) == encoded)
            #expect(SecretBase64.decode(encoded) == Array(plain.utf8))
        }
        #expect(SecretBase64.encode([0xFB, 0xFF, 0xBF]) == "+/+/")
    }

    @Test func base64AcceptsMissingPaddingAndRejectsJunk() {
        #expect(SecretBase64.decode("Zm9vYg") == Array("foob".utf8))
        #expect(SecretBase64.decode("Zm9vYmE") == Array("fooba".utf8))
        for invalid in ["Z", "Zm9v!", "Zm9=v", "Zm===", "Zg=", "Zm9v Yg==", "-_"] {
            #expect(SecretBase64.decode(invalid) == nil, "\(invalid)")
        }
    }

    @Test func base64RoundTripsRandomBytes() {
        var random = SeededRandom(seed: 21)
        for count in 0..<200 {
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
            let encoded = SecretBase64.encode(bytes)
            #expect(encoded.utf8.count == (count + 2) / 3 * 4)
            #expect(SecretBase64.decode(encoded) == bytes)
        }
    }

    @Test func calendarConversionMatchesADayByDayWalk() {
        // 1899-01-01 is 25,932 days before 1970-01-01 (71 years, 17 of them leap years).
        var (year, month, day) = (1899, 1, 1)
        let lengths = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        var mismatches: [String] = []
        for days in -25_932..<200_000 where mismatches.count < 5 {
            if SecretDateFormat.daysSince1970(year: year, month: month, day: day) != days
                || SecretDateFormat.civilDate(daysSince1970: days) != (year, month, day)
            {
                mismatches.append("\(year)-\(month)-\(day) is day \(days)")
            }
            let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
            day += 1
            if day > lengths[month - 1] + (month == 2 && leap ? 1 : 0) {
                (day, month) = (1, month + 1)
                if month > 12 { (month, year) = (1, year + 1) }
            }
        }
        #expect(mismatches.isEmpty)
        #expect(year == 2517)
        #expect(SecretDateFormat.daysSince1970(year: 1970, month: 1, day: 1) == 0)
        #expect(SecretDateFormat.daysSince1970(year: 0, month: 1, day: 1) == -719_528)
        #expect(SecretDateFormat.civilDate(daysSince1970: -719_528) == (0, 1, 1))
        let last = SecretDateFormat.daysSince1970(year: 9999, month: 12, day: 31)
        #expect(SecretDateFormat.civilDate(daysSince1970: last) == (9999, 12, 31))
        #expect(SecretDateFormat.civilDate(daysSince1970: last + 1) == (10_000, 1, 1))
    }

    @Test func formatsDatesLikeFoundation() {
        var random = SeededRandom(seed: 23)
        // Foundation's calendar is Julian before 1582; ISO 8601 and this formatter are Gregorian throughout.
        let start = SecretDateFormat.daysSince1970(year: 1583, month: 1, day: 1) * 86_400
        for _ in 0..<500 {
            let seconds = Double(Int.random(in: start...253_402_300_799, using: &random))
            let date = Date(timeIntervalSince1970: seconds)
            #expect(SecretDateFormat.string(from: date) == date.formatted(.iso8601))
        }
        #expect(
            SecretDateFormat.string(from: Date(timeIntervalSince1970: 1_714_564_800))
                == "2024-05-01T12:00:00Z")
        #expect(SecretDateFormat.string(from: Date(timeIntervalSince1970: 0.5)) == "1970-01-01T00:00:00.5Z")
        #expect(
            SecretDateFormat.string(from: Date(timeIntervalSince1970: -0.25)) == "1969-12-31T23:59:59.75Z")
        #expect(SecretDateFormat.string(from: Date(timeIntervalSince1970: 253_402_300_800)) == nil)
        #expect(SecretDateFormat.string(from: Date(timeIntervalSinceReferenceDate: .nan)) == nil)
    }

    @Test func parsesISO8601Leniently() {
        let noon = Date(timeIntervalSince1970: 1_714_564_800)
        for text in [
            "2024-05-01T12:00:00Z", "2024-05-01t12:00:00z", "2024-05-01 12:00:00Z", "2024-05-01T12:00Z",
            "2024-05-01T14:00:00+02:00", "2024-05-01T14:00:00+0200", "2024-05-01T14:00:00+02",
            "2024-05-01T09:30:00-02:30", "2024-05-01T12:00:00.000Z", "2024-05-01T12:00:00,0Z",
            "2024-05-01T12:00:00",
        ] {
            #expect(SecretDateFormat.date(from: text) == noon, "\(text)")
        }
        #expect(SecretDateFormat.date(from: "2024-05-01") == Date(timeIntervalSince1970: 1_714_521_600))
        #expect(SecretDateFormat.date(from: "2024-02-29T00:00:00Z") != nil)
        for invalid in [
            "", "2024", "2024-5-01", "2023-02-29T00:00:00Z", "2024-13-01", "2024-05-01T24:00:00Z",
            "2024-05-01T12:60:00Z", "2024-05-01T12:00:60Z", "2024-05-01T12:00:00.Z", "2024-05-01T12:00:00+2",
            "2024-05-01T12:00:00Zjunk", "yesterday",
        ] {
            #expect(SecretDateFormat.date(from: invalid) == nil, "\(invalid)")
        }
    }

    @Test func boolsAndNumbersReadLeniently() {
        for text in ["true", "TRUE", "Yes", "on", "1", " true "] {
            #expect(Bool.parseSecretText(text) == true)
        }
        for text in ["false", "No", "OFF", "0"] { #expect(Bool.parseSecretText(text) == false) }
        #expect(Bool.parseSecretText("maybe") == nil)
        #expect(Int.parseSecretText(" 42\t") == 42)
        #expect(Int.parseSecretText("4 2") == nil)
        #expect(UInt8.parseSecretText("-1") == nil)
        #expect(Double.parseSecretText(" 1e3 ") == 1000)
    }
}
