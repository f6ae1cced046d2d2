import SyncStreams

/// SplitMix64: a small, fast, seeded generator, so that a simulator's seed decides every random choice it
/// makes (flaky faults, the engine's reconnect jitter).
struct SimulatorRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A `SimulatorRandom` shared by threads.
final class SharedRandom: Sendable {
    private let generator: Locked<SimulatorRandom>

    init(seed: UInt64) { generator = Locked(SimulatorRandom(seed: seed)) }

    /// A double in `0..<1`.
    func unit() -> Double { generator.withLock { Double.random(in: 0..<1, using: &$0) } }

    /// A non-zero 64-bit number.
    func nonZero() -> UInt64 { generator.withLock { UInt64.random(in: 1...UInt64.max, using: &$0) } }
}
