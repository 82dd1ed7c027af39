import CofferTestSupport
import Testing

@testable import Coffer

/// The strength estimate: what people really choose comes out weak, random passwords strong.
@Suite struct PasswordStrengthTests {
    /// Passwords built the way people build them, each below 30 bits, with the pattern that gives it away.
    @Test(arguments: [
        ("password", PasswordStrength.Pattern.commonPassword),
        ("P@ssw0rd", .commonPassword),
        ("Password1", .commonPassword),
        ("abcdefghij", .sequence),
        ("9876543210", .sequence),
        ("zzzzzzzzzzzz", .repetition),
        ("xyzxyzxyzxyz", .repetition),
        ("qwertyuiop", .commonPassword),
        ("asdfghjkl;'", .keyboardRun),
        ("1qaz2wsx3edc4rfv", .keyboardRun),
        ("!@#$%^&*()", .keyboardRun),
        ("dragon1985", .date),
        ("04071976", .date),
        ("Summer2019!", .commonPassword),
        ("horsebattery", .dictionaryWord),
        ("CHARLOTTE", .dictionaryWord),
    ])
    func humanPasswordsAreWeak(password: String, pattern: PasswordStrength.Pattern) {
        let strength = PasswordStrength.estimate(password)
        #expect(strength.bits < 30, "\(password): \(strength)")
        #expect(strength.patterns.contains(pattern), "\(password): \(strength.patterns)")
    }

    @Test func theEntryNameCountsAsAWordAnAttackerTries() {
        let alone = PasswordStrength.estimate("githubmarmalade")
        let named = PasswordStrength.estimate("githubmarmalade", userWords: ["web", "github", "marmalade"])
        #expect(alone.bits > 40)
        #expect(named.bits < 20)
        #expect(named.patterns == [.entryWord, .entryWord])
    }

    @Test func commonPasswordsAreRecognisedWhateverTheirCase() {
        #expect(PasswordStrength.estimate("LetMeIn").isCommon)
        #expect(PasswordStrength.estimate("iloveyou").isCommon)
        #expect(!PasswordStrength.estimate("iloveyou-not").isCommon)
        #expect(PasswordStrength.estimate("").bits == 0)
    }

    /// Seeded random passwords: the estimate never falls below what their length and alphabet give an
    /// attacker who knows nothing, less the little that chance patterns take off.
    @Test func randomPasswordsAreStrong() {
        var random = SeededRandom(seed: 0xA0D17)
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&*+-=?@^_~")
        for _ in 0..<300 {
            let length = 16 + random.below(16)
            let password = String((0..<length).map { _ in random.pick(alphabet) })
            let strength = PasswordStrength.estimate(password)
            #expect(strength.bits >= Double(length) * 4, "\(password): \(strength.bits)")
            #expect(!strength.isCommon)
        }
        // Long passwords (past what is analysed piece by piece) still count every character.
        let long = String(repeating: "Xq7#", count: 100)
        #expect(
            PasswordStrength.estimate(long).bits > PasswordStrength.estimate(String(long.prefix(128))).bits)
    }

    @Test func strangeInputIsEstimatedWithoutTrouble() {
        for password in [
            "\u{0}", "é", "パスワード", "\u{1F511}\u{1F511}\u{1F511}", "\r", String(repeating: "a", count: 5000),
        ] {
            let strength = PasswordStrength.estimate(password)
            #expect(strength.bits.isFinite && strength.bits >= 0, "\(password.debugDescription)")
        }
    }
}
