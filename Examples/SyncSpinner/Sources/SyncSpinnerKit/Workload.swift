import Foundation

/// The changesets the writer writes: `count` of mixed sizes adding up to exactly `totalBytes`, their sizes
/// and bytes drawn from a seeded generator, so a run is reproducible.
///
/// Sizes lie in `sizeBounds(count:totalBytes:)` — 1 KiB … 256 KiB whenever the average size allows it
/// (the default, 200 changesets of 8 MB, averages 40 KB) — and are drawn log-uniformly between those
/// bounds (as many small changesets as large ones per doubling), then scaled so that they add up to
/// `totalBytes`: sizes the scaling pushes past a bound are held at it and the rest scaled again, then
/// the rounding is spread one byte at a time.
public struct Workload: Sendable {
    public let sizes: [Int]
    public let seed: UInt64

    /// The smallest changeset: 1 KiB, unless the average is below that.
    public static let smallest = 1024
    /// The largest changeset: 256 KiB, unless the average is above that.
    public static let largest = 256 * 1024

    /// The bounds every size of a workload of `count` changesets and `totalBytes` lies in: 1 KiB …
    /// 256 KiB; when the average is below 4 KiB the lower bound is a quarter of it (at least one byte),
    /// and when it is above 256 KiB the upper bound is the average (rounded up), so that `count` sizes
    /// within them can always add up to `totalBytes`.
    public static func sizeBounds(count: Int, totalBytes: Int) -> ClosedRange<Int> {
        precondition(count > 0 && totalBytes >= count, "at least one byte per changeset")
        let lower = min(smallest, max(1, totalBytes / count / 4))
        let upper = max(largest, (totalBytes + count - 1) / count)
        return lower...upper
    }

    /// A workload of `count` changesets (≥ 1) holding `totalBytes` (≥ `count`) together.
    public init(count: Int, totalBytes: Int, seed: UInt64) {
        let bounds = Self.sizeBounds(count: count, totalBytes: totalBytes)
        var generator = SeededGenerator(seed: seed)
        // Log-uniform in [lower, upper].
        let logLower = log(Double(bounds.lowerBound))
        let logUpper = log(Double(bounds.upperBound))
        var sizes = (0..<count).map { _ -> Double in
            let unit = Double(generator.next() >> 11) / Double(1 << 53)
            return exp(logLower + (logUpper - logLower) * unit)
        }
        // Scale the free sizes to the total; hold those that cross a bound at it, and scale again.
        var held = [Bool](repeating: false, count: count)
        for _ in 0..<count {
            let heldBytes = sizes.indices.reduce(0.0) { held[$1] ? $0 + sizes[$1] : $0 }
            let freeBytes = sizes.indices.reduce(0.0) { held[$1] ? $0 : $0 + sizes[$1] }
            guard freeBytes > 0 else { break }
            let scale = (Double(totalBytes) - heldBytes) / freeBytes
            var newlyHeld = false
            for index in sizes.indices where !held[index] {
                sizes[index] *= scale
                if sizes[index] <= Double(bounds.lowerBound) || sizes[index] >= Double(bounds.upperBound) {
                    sizes[index] = min(max(sizes[index], Double(bounds.lowerBound)), Double(bounds.upperBound))
                    held[index] = true
                    newlyHeld = true
                }
            }
            if !newlyHeld { break }
        }
        // Whole bytes: round down, then give (or take) the difference one byte at a time, largest
        // remainders first, never leaving the bounds.
        var whole = sizes.map { min(max(Int($0.rounded(.down)), bounds.lowerBound), bounds.upperBound) }
        var difference = totalBytes - whole.reduce(0, +)
        let byRemainder = sizes.indices.sorted {
            sizes[$0] - sizes[$0].rounded(.down) > sizes[$1] - sizes[$1].rounded(.down)
        }
        while difference != 0 {
            let step = difference > 0 ? 1 : -1
            var moved = false
            for index in byRemainder where difference != 0 && bounds.contains(whole[index] + step) {
                whole[index] += step
                difference -= step
                moved = true
            }
            precondition(moved, "the bounds admit the total")
        }
        self.sizes = whole
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
