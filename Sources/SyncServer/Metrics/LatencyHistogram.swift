import SyncStorage
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A latency histogram with fixed buckets, recorded lock-free (a few relaxed atomic adds per sample)
/// from any thread, read as Prometheus histogram lines.
package final class LatencyHistogram: Sendable {
    /// The buckets' upper bounds, in seconds (the `+Inf` bucket is implicit).
    package static let bounds: [Double] = [
        0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10,
    ]

    private final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }

    /// Per bucket (and one more for `+Inf`): the samples that fell into it (not cumulative).
    private let buckets: [Counter] = (0...LatencyHistogram.bounds.count).map { _ in Counter() }
    private let sumNanoseconds = Atomic<Int>(0)

    package init() {}

    /// Records one sample.
    package func record(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        let nanoseconds = max(0, Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
        let value = Double(nanoseconds) / 1e9
        let index = Self.bounds.firstIndex { value <= $0 } ?? Self.bounds.count
        buckets[index].value.add(1, ordering: .relaxed)
        sumNanoseconds.add(nanoseconds, ordering: .relaxed)
    }

    /// How many samples were recorded.
    package var count: Int { buckets.reduce(0) { $0 + $1.value.load(ordering: .relaxed) } }

    /// The Prometheus lines of the histogram `name` (`_bucket` cumulative with `le`, `_sum`, `_count`).
    func prometheusLines(_ name: String) -> [String] {
        var lines: [String] = []
        var cumulative = 0
        for (index, bound) in Self.bounds.enumerated() {
            cumulative += buckets[index].value.load(ordering: .relaxed)
            lines.append("\(name)_bucket{le=\"\(bound)\"} \(cumulative)")
        }
        cumulative += buckets[Self.bounds.count].value.load(ordering: .relaxed)
        lines.append("\(name)_bucket{le=\"+Inf\"} \(cumulative)")
        lines.append("\(name)_sum \(Double(sumNanoseconds.load(ordering: .relaxed)) / 1e9)")
        lines.append("\(name)_count \(cumulative)")
        return lines
    }
}

/// A `FileSystem` that times each `sync` (fsync) into a histogram and forwards every call.
struct TimedFileSystem: FileSystem {
    let base: any FileSystem
    let syncLatency: LatencyHistogram

    func open(_ path: String, flags: Int32, mode: mode_t) -> Result<Int32, FileSystemError> {
        base.open(path, flags: flags, mode: mode)
    }
    func read(
        _ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64
    ) -> Result<Int, FileSystemError> {
        base.read(descriptor, into: buffer, at: offset)
    }
    func write(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer, at offset: Int64) -> Result<Int, FileSystemError>
    {
        base.write(descriptor, buffer, at: offset)
    }
    func sync(_ descriptor: Int32) -> FileSystemError? {
        let start = ContinuousClock.now
        defer { syncLatency.record(.now - start) }
        return base.sync(descriptor)
    }
    func truncate(_ descriptor: Int32, to length: Int64) -> FileSystemError? { base.truncate(descriptor, to: length) }
    func lockExclusively(_ descriptor: Int32) -> FileSystemError? { base.lockExclusively(descriptor) }
    func size(_ descriptor: Int32) -> Result<Int64, FileSystemError> { base.size(descriptor) }
    func close(_ descriptor: Int32) { base.close(descriptor) }
}
