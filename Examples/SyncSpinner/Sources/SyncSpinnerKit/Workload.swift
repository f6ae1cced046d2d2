import Foundation

/// The changesets the writer writes: `count` of mixed sizes adding up to `totalBytes`, their sizes and
/// bytes drawn from a seeded generator, so a run is reproducible.
///
/// Sizes are proportional to weights drawn from 1…256 (so, at the defaults, 1 KB to 256 KB), the last one
/// taking the rounding; every changeset has at least one byte.
public struct Workload: Sendable {
    public let sizes: [Int]
    public let seed: UInt64

    public init(count: Int, totalBytes: Int, seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        let weights = (0..<count).map { _ in Int(generator.next() % 256) + 1 }
        let weightSum = weights.reduce(0, +)
        var sizes = weights.map { max(1, Int((Double(totalBytes) * Double($0) / Double(weightSum)).rounded(.down))) }
        var excess = sizes.reduce(0, +) - totalBytes
        // Take back what the minimum of one byte added, from the largest, then give the rounding to the last.
        var index = 0
        while excess > 0, index < sizes.count {
            let largest = sizes.indices.max { sizes[$0] < sizes[$1] } ?? 0
            let taken = min(excess, sizes[largest] - 1)
            sizes[largest] -= taken
            excess -= taken
            index += 1
        }
        if excess < 0 { sizes[sizes.count - 1] -= excess }
        self.sizes = sizes
        self.seed = seed
    }

    public var count: Int { sizes.count }
    public var totalBytes: Int { sizes.reduce(0, +) }

    /// The bytes of changeset `index`: a stream of the seeded generator, distinct per changeset.
    public func changeset(_ index: Int) -> Data {
        var generator = SeededGenerator(seed: seed &+ 0x9E37_79B9 &* UInt64(index + 1))
        var data = Data(count: sizes[index])
        data.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                var word = generator.next()
                withUnsafeBytes(of: &word) { wordBytes in
                    let count = min(8, buffer.count - offset)
                    for byte in 0..<count { buffer[offset + byte] = wordBytes[byte] }
                }
                offset += 8
            }
        }
        return data
    }
}

/// SplitMix64: small, fast and deterministic.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// An order-sensitive checksum of a sequence of byte strings: 64-bit FNV-1a over each string's length and
/// bytes, so the same changesets in another order, or split differently, give another value.
public struct ChangesetChecksum: Sendable, Hashable, CustomStringConvertible {
    public private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325
    public private(set) var count = 0
    public private(set) var bytes = 0

    public init() {}

    public mutating func add(_ data: Data) {
        var hash = value
        withUnsafeBytes(of: UInt64(data.count).littleEndian) { length in
            for byte in length {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01b3
            }
        }
        for byte in data {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        value = hash
        count += 1
        bytes += data.count
    }

    public var description: String { String(value, radix: 16) }
}
