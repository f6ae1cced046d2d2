import Dispatch

/// Collects what subscribers receive, so that the optimizer cannot drop the work being measured.
///
/// `@unchecked Sendable`: each scenario writes to its accumulator from one serialized context at a
/// time (a stream's events to one subscriber are serialized by contract, and every scenario subscribes
/// from, sends on, or waits for one thread), and reads it only after the last delivery happened-before
/// (on the same thread, or after a semaphore / `await` that follows the last write).
public final class Accumulator: @unchecked Sendable {
    // No runtime exclusivity check: it would cost more than most pipelines under test (it dominated the
    // first profiles), and every library and the floor share this sink. Each benchmark feeds it from one
    // thread at a time (deliveries are serialized).
    @exclusivity(unchecked) public var total = 0
    @exclusivity(unchecked) public var count = 0

    public init() {}

    @inline(__always)
    public func add(_ value: Int) {
        total &+= value
        count &+= 1
    }
}

/// The closures every library runs in P1 (the floor calls exactly these).
public enum Stage {
    public static let transform: @Sendable (Int) -> Int = { $0 &* 3 }
    public static let isIncluded: @Sendable (Int) -> Bool = { $0 & 1 == 0 }
}

/// Hides a value from the optimizer (it cannot see what a non-inlined function returns).
@inline(never)
public func opaque<T>(_ value: T) -> T { value }

/// One measurable (scenario, library) pair.
public struct Scenario: Sendable {
    /// "P1" … "P6", with a suffix for a variant ("P5 latest").
    public let id: String
    /// What is measured, for the table.
    public let title: String
    /// "SyncStreams", "OpenCombine", "async-algorithms", "AsyncStream" or "floor".
    public let library: String
    /// What one op is ("value", "send", "delivery", …).
    public let unit: String
    /// The nominal size passed to `run` (values, sends, subscriptions …).
    public let count: Int
    /// Ops per unit of `count` (P4: subscribers, because one value is delivered to each of them).
    public let opsPerCount: Int
    /// Runs the scenario with the given size and returns a checksum (or, for `.reportedByRun`, the
    /// nanoseconds to report).
    public let run: @Sendable (Int) async -> Int
    /// What is reported per op: the wall time of `run` (default), or what `run` returns (P10: the CPU time
    /// of the invalidating thread).
    public let metric: Metric

    /// What a scenario's ns/op measure.
    public enum Metric: Sendable {
        /// The wall time of a run.
        case wallTime
        /// The nanoseconds the run returns.
        case reportedByRun
    }

    public init(
        id: String, title: String, library: String, unit: String, count: Int, opsPerCount: Int = 1,
        metric: Metric = .wallTime, run: @escaping @Sendable (Int) async -> Int
    ) {
        self.metric = metric
        self.id = id
        self.title = title
        self.library = library
        self.unit = unit
        self.count = count
        self.opsPerCount = opsPerCount
        self.run = run
    }
}

/// Sizes of the scenarios (issue 4). Peers that are very slow run fewer ops; results are per op.
public enum Sizes {
    public static let p1Values = 10_000_000
    public static let p2Sends = 2_000_000
    public static let p2AsyncAlgorithmsSends = 100_000
    public static let p3Subscriptions = 1_000_000
    public static let p4Subscribers = 1_000
    public static let p4Values = 10_000
    public static let p5Values = 1_000_000
    public static let p6Values = 1_000_000
    public static let p7Subscribers = 1_000
    public static let p7Updates = 10_000
    /// P7 status: writes to one offline session.
    public static let p7StatusWrites = 10_000
    /// 100 MB, as 1,600 changesets of 64 KB.
    public static let p8Megabytes = 100
    /// P8w: changesets written in total by all writers (1 KiB each; the 64 KiB variant writes a quarter).
    public static let p8wChangesets = 4_096
    /// P9: values sent in total by the two threads.
    public static let p9Values = 2_000_000
    /// P10: invalidations, each while a 1 ms callback runs.
    public static let p10Invalidations = 200
}

/// Every scenario of every library, in table order.
public enum Catalog {
    public static let all: [Scenario] =
        SyncStreamsScenarios.all + SyncStreamsExecutorScenarios.all + OpenCombineScenarios.all
        + AsyncScenarios.all + FloorScenarios.all + EngineScenarios.all + EngineScenarios.multiWriterScenarios
        + ContentionScenarios.all
}
