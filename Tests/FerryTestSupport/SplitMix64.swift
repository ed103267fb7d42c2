/// SplitMix64: a small deterministic generator, so that sampled and random test data is the
/// same on every run.
public struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next number of the sequence.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<bound`.
    public mutating func next(upTo bound: Int) -> Int { Int(next() % UInt64(bound)) }

    /// `bytes` with one to three of them set to random values (a corrupt message, for the
    /// tests that bad bytes are refused and never crash a reader).
    public mutating func corrupting(_ bytes: [UInt8]) -> [UInt8] {
        var corrupt = bytes
        for _ in 0..<(1 + next(upTo: 3)) {
            corrupt[next(upTo: corrupt.count)] = UInt8(truncatingIfNeeded: next())
        }
        return corrupt
    }
}
