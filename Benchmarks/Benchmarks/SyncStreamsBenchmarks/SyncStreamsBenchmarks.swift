// package-benchmark suite: the same scenarios as `compare` (Sources/Scenarios), with allocation counts
// and peak memory. Run with `swift package benchmark` (or `swift package benchmark --filter "P1.*"`).
//
// Each iteration performs exactly `scalingFactor` ops (1 M, or 1 K for async-algorithms' combineLatest,
// which takes microseconds per send), so every metric is reported per op: ns per value / send /
// subscription / delivery, and mallocs per op.
import Benchmark
import Scenarios

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .peakMemoryResident, .throughput],
        timeUnits: .nanoseconds,
        warmupIterations: 1,
        maxDuration: .seconds(3),
        maxIterations: 10
    )
    for scenario in Catalog.all {
        let scalingFactor: BenchmarkScalingFactor = scenario.library == "async-algorithms" ? .kilo : .mega
        let count = max(2, scalingFactor.rawValue / scenario.opsPerCount)
        Benchmark(
            "\(scenario.id) \(scenario.library) per \(scenario.unit)",
            configuration: .init(scalingFactor: scalingFactor)
        ) { _ in
            blackHole(await scenario.run(count))
        }
    }
}
