/// A small, seeded random number generator (SplitMix64): whatever a test makes from it is reproducible
/// from the seed alone, on every platform.
public struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64

    /// A generator whose whole state is `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }

    /// One element of a non-empty array.
    public mutating func pick<T>(_ choices: [T]) -> T {
        choices[Int.random(in: 0..<choices.count, using: &self)]
    }

    /// True with the given probability (0 to 1).
    public mutating func chance(_ probability: Double) -> Bool {
        Double.random(in: 0..<1, using: &self) < probability
    }

    /// A number in `0..<count` (`count` > 0).
    public mutating func below(_ count: Int) -> Int {
        Int.random(in: 0..<count, using: &self)
    }

    /// One element of a non-empty list, chosen with probability proportional to its weight.
    public mutating func weighted<T>(_ choices: [(weight: Int, value: T)]) -> T {
        var left = below(choices.reduce(0) { $0 + $1.weight })
        for choice in choices {
            if left < choice.weight { return choice.value }
            left -= choice.weight
        }
        return choices[choices.count - 1].value
    }
}
