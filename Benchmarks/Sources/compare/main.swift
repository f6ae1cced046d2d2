// Times every scenario of every library (monotonic clock, several repetitions, median) and prints one
// comparison table. Run with `./compare.sh` (or `swift run -c release compare [--scale X] [--filter P1]`).
import Dispatch
import Foundation
import Scenarios

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

struct Options {
    var scale = 1.0
    var filter: String?
    var library: String?
    var ids: [String] = []  // --id, repeatable: only these scenario ids, matched exactly
    var budgetSeconds = 2.0
    var minRepetitions = 3
    var maxRepetitions = 7
    var checksums = false

    init(_ arguments: [String]) {
        var iterator = arguments.dropFirst().makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--scale": scale = Double(iterator.next() ?? "") ?? scale
            case "--filter": filter = iterator.next()
            case "--library": library = iterator.next()
            case "--id": ids.append(iterator.next() ?? "")
            case "--checksums": checksums = true
            case "--budget": budgetSeconds = Double(iterator.next() ?? "") ?? budgetSeconds
            case "--min-repetitions": minRepetitions = Int(iterator.next() ?? "") ?? minRepetitions
            case "--max-repetitions": maxRepetitions = Int(iterator.next() ?? "") ?? maxRepetitions
            default:
                print(
                    "usage: compare [--scale X] [--filter P1] [--id \"P8n durable\"]... [--library SyncStreams]"
                        + " [--budget seconds-per-case]"
                        + " [--min-repetitions n] [--max-repetitions n] [--checksums]")
                exit(2)
            }
        }
    }
}

struct Measurement {
    let scenario: Scenario
    let count: Int
    let samples: [Double]  // ns per op, one per repetition

    var median: Double {
        let sorted = samples.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}

func nanoseconds() -> UInt64 { DispatchTime.now().uptimeNanoseconds }  // CLOCK_MONOTONIC

/// One warm-up run (which also estimates the time), then as many repetitions as fit the budget
/// (at least `minRepetitions`, at most `maxRepetitions`); the median is reported.
func measure(_ scenario: Scenario, options: Options) async -> Measurement {
    let count = max(2, Int((Double(scenario.count) * options.scale).rounded()))
    let ops = Double(count * scenario.opsPerCount)
    var checksum = 0
    let warmupStart = nanoseconds()
    checksum &+= await scenario.run(count)
    let estimate = Double(nanoseconds() - warmupStart) / 1e9
    let repetitions = min(
        options.maxRepetitions, max(options.minRepetitions, Int(options.budgetSeconds / max(estimate, 1e-6))))
    var samples: [Double] = []
    for _ in 0..<repetitions {
        let start = nanoseconds()
        let result = await scenario.run(count)
        checksum &+= result
        switch scenario.metric {
        case .wallTime: samples.append(Double(nanoseconds() - start) / ops)
        case .reportedByRun: samples.append(Double(result) / ops)
        }
    }
    if checksum == 42 { print("", terminator: "") }  // keeps the checksum alive
    return Measurement(scenario: scenario, count: count, samples: samples)
}

struct Target {
    let id: String
    let text: String
    /// Returns whether the target is met, given a lookup of median ns/op by library.
    let check: ([String: Double]) -> Bool?
}

func ratio(_ numerator: Double?, _ denominator: Double?) -> Double? {
    guard let numerator, let denominator, denominator > 0 else { return nil }
    return numerator / denominator
}

let targets: [String: Target] = [
    "P1": Target(id: "P1", text: "≥40× OpenCombine, ≤3× floor") { ns in
        guard let oc = ratio(ns["OpenCombine"], ns["SyncStreams"]), let fl = ratio(ns["SyncStreams"], ns["floor"])
        else { return nil }
        return oc >= 40 && fl <= 3
    },
    "P2": Target(id: "P2", text: "≥10× OpenCombine, ≥100× async-algorithms") { ns in
        guard let oc = ratio(ns["OpenCombine"], ns["SyncStreams"]),
            let aa = ratio(ns["async-algorithms"], ns["SyncStreams"])
        else { return nil }
        return oc >= 10 && aa >= 100
    },
    "P3": Target(id: "P3", text: "≥10× OpenCombine") { ns in
        ratio(ns["OpenCombine"], ns["SyncStreams"]).map { $0 >= 10 }
    },
    "P4": Target(id: "P4", text: "≥20× OpenCombine") { ns in
        ratio(ns["OpenCombine"], ns["SyncStreams"]).map { $0 >= 20 }
    },
    "P5": Target(id: "P5", text: "≥5× OpenCombine receive(on:)") { ns in
        ratio(ns["OpenCombine"], ns["SyncStreams"]).map { $0 >= 5 }
    },
    "P6": Target(id: "P6", text: "no slower than AsyncStream (≥1×)") { ns in
        ratio(ns["AsyncStream"], ns["SyncStreams"]).map { $0 >= 1 }
    },
    "P7": Target(id: "P7", text: "< 50 ns per delivered value") { ns in ns["SyncStreams"].map { $0 < 50 } },
    "P7 outstanding": Target(id: "P7 outstanding", text: "< 50 ns per delivered value") { ns in
        ns["SyncStreams"].map { $0 < 50 }
    },
    "P7 session path": Target(id: "P7 session path", text: "< 50 ns per delivered value") { ns in
        ns["SyncStreams"].map { $0 < 50 }
    },
    "P8": Target(id: "P8", text: "≥ 50 % of loopback TCP throughput") { ns in
        ratio(ns["loopback TCP"], ns["SyncStreams"]).map { $0 >= 0.5 }
    },
    "P8 64 in flight": Target(
        id: "P8 64 in flight", text: "2 durable copies ≥ 50 % of the disk's batched durable bandwidth"
    ) { ns in
        ratio(ns["disk: 64 × 64 KiB, one fsync"].map { $0 * 2 }, ns["SyncStreams"]).map { $0 >= 0.5 }
    },
    "P8n": Target(id: "P8n", text: "≥ 80 % of the embedded throughput in the same run") { ns in
        ratio(ns["embedded (same run)"], ns["SyncStreams"]).map { $0 >= 0.8 }
    },
    "P10": Target(id: "P10", text: "the waiting thread uses no CPU while it waits (< 50 µs per wait)") { ns in
        ns["SyncStreams"].map { $0 < 50_000 }
    },
]

func format(_ value: Double?) -> String {
    guard let value else { return "—" }
    if value >= 100 { return String(Int(value.rounded())) }
    if value >= 10 { return String(Double(Int((value * 10).rounded())) / 10) }
    return String(Double(Int((value * 100).rounded())) / 100)
}

func formatRatio(_ value: Double?) -> String {
    guard let value else { return "—" }
    return format(value) + "×"
}

let options = Options(CommandLine.arguments)
let scenarios = Catalog.all.filter { scenario in
    (options.filter.map { scenario.id.hasPrefix($0) } ?? true)
        && (options.ids.isEmpty || options.ids.contains(scenario.id))
        && (options.library.map { scenario.library == $0 } ?? true)
}
let machine = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
    .split(separator: "\n").first { $0.hasPrefix("model name") }?
    .split(separator: ":").last?.trimmingCharacters(in: .whitespaces)

if options.checksums {
    // Sanity check: every library computes the same checksum for the same scenario and size.
    for scenario in scenarios {
        print("\(scenario.id) \(scenario.library): \(await scenario.run(1_000))")
    }
    exit(0)
}

print("SyncStreams benchmarks — \(machine ?? "unknown CPU"), \(sysconf(Int32(_SC_NPROCESSORS_ONLN))) CPUs")
var measurements: [Measurement] = []
for scenario in scenarios {
    let measurement = await measure(scenario, options: options)
    measurements.append(measurement)
    let spread = "min \(format(measurement.samples.min())) max \(format(measurement.samples.max()))"
    print(
        "  \(scenario.id) \(scenario.library): \(format(measurement.median)) ns/\(scenario.unit)"
            + " (median of \(measurement.samples.count), \(measurement.count * scenario.opsPerCount) ops; \(spread))")
}

// One row per scenario id, in the order first seen.
var ids: [String] = []
for measurement in measurements where !ids.contains(measurement.scenario.id) { ids.append(measurement.scenario.id) }
ids.sort()

let header = [
    "scenario", "unit", "SyncStreams ns/op", "OpenCombine ns/op", "OC ÷ SS", "async peer", "peer ns/op",
    "peer ÷ SS", "floor ns/op", "SS ÷ floor", "target", "result",
]
var rows: [[String]] = []
for id in ids {
    let group = measurements.filter { $0.scenario.id == id }
    var ns: [String: Double] = [:]
    for measurement in group { ns[measurement.scenario.library] = measurement.median }
    // "P5 latest" is compared with OpenCombine's (unbounded) receive(on:), which has no conflating variant.
    if id == "P5 latest", ns["OpenCombine"] == nil {
        ns["OpenCombine"] =
            measurements.first { $0.scenario.id == "P5" && $0.scenario.library == "OpenCombine" }?
            .median
    }
    let asyncPeer = ["async-algorithms", "AsyncStream", "loopback TCP"].first { ns[$0] != nil }
    let target = targets[id]
    let met = target.flatMap { $0.check(ns) }
    rows.append([
        id + " " + (group.first?.scenario.title ?? ""),
        group.first?.scenario.unit ?? "",
        format(ns["SyncStreams"]),
        format(ns["OpenCombine"]),
        formatRatio(ratio(ns["OpenCombine"], ns["SyncStreams"])),
        asyncPeer ?? "—",
        format(asyncPeer.flatMap { ns[$0] }),
        formatRatio(ratio(asyncPeer.flatMap { ns[$0] }, ns["SyncStreams"])),
        format(ns["floor"]),
        formatRatio(ratio(ns["SyncStreams"], ns["floor"])),
        target?.text ?? "(no target)",
        met.map { $0 ? "met" : "MISSED" } ?? "—",
    ])
}

print("")
print("| " + header.joined(separator: " | ") + " |")
print("|" + header.map { _ in " --- " }.joined(separator: "|") + "|")
for row in rows { print("| " + row.joined(separator: " | ") + " |") }
