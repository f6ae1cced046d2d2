import Foundation
import Testing

/// The seeded simulation of the whole system under faults (see `Simulation` and docs/RELIABILITY.md).
///
/// `swift test --filter SimulationTests` runs a fixed set of seeds with the fault kinds that pass on this
/// branch. Environment variables select other runs (soak mode):
/// - `SYNC_SIMULATION_SEEDS`: `1234`, `1,5,9`, `1-10000`, or `random:500` (500 seeds from a random start);
/// - `SYNC_SIMULATION_FAULTS`: `passing` (default), `all`, or a list such as `passing,+enospc` or `all,-serverRollback`;
/// - `SYNC_SIMULATION_CHECKS`: `passing` (default) or `all` (also: every stream finishes on close);
/// - `SYNC_SIMULATION_STEPS`: operations per run (default 40);
/// - `SYNC_SIMULATION_VERBOSE=1`: print each run's schedule.
@Suite struct SimulationTests {
    /// The seeds `swift test` runs.
    static let defaultSeeds: [UInt64] = Array(1...16)

    @Test func seededRunsKeepEveryInvariant() async throws {
        let environment = ProcessInfo.processInfo.environment
        let seeds = try SeedSelection.parse(environment["SYNC_SIMULATION_SEEDS"]) ?? Self.defaultSeeds
        let faultsText = environment["SYNC_SIMULATION_FAULTS"] ?? "passing"
        let faults = try #require(FaultPlan(parsing: faultsText), "unknown fault kind in \(faultsText)")
        let checks: InvariantChecks = environment["SYNC_SIMULATION_CHECKS"] == "all" ? .all : .passing
        var shape = SimulationShape()
        if let steps = environment["SYNC_SIMULATION_STEPS"].flatMap(Int.init) { shape.stepCount = steps }
        let verbose = environment["SYNC_SIMULATION_VERBOSE"] == "1"

        var totals = (runs: 0, operations: 0, faults: [FaultKind: Int](), violations: 0)
        var failures: [String] = []
        let started = ContinuousClock.now
        for seed in seeds {
            let result = await Simulation(seed: seed, shape: shape, faults: faults, checks: checks).run()
            totals.runs += 1
            totals.operations += result.operations
            totals.faults.merge(result.faults, uniquingKeysWith: +)
            totals.violations += result.violations.count
            if verbose { print("seed \(seed):\n  " + result.log.joined(separator: "\n  ")) }
            if !result.violations.isEmpty {
                let replay = Self.replayCommand(seed: seed, faults: faults, checks: checks, shape: shape)
                let message =
                    "simulation seed \(seed) broke \(result.violations.count) invariant(s):\n  "
                    + result.violations.prefix(20).joined(separator: "\n  ")
                    + "\nschedule:\n  " + result.log.joined(separator: "\n  ")
                    + "\nreplay: \(replay)"
                print(message)
                fflush(nil)
                failures.append("seed \(seed): \(result.violations.first ?? "")\n  replay: \(replay)")
            }
            if seeds.count > 20, totals.runs % 50 == 0 || totals.runs == seeds.count {
                let faultSummary = totals.faults.sorted { $0.key < $1.key }.map { "\($0.key.rawValue) \($0.value)" }
                print(
                    "simulation: \(totals.runs)/\(seeds.count) seeds (from \(seeds.first ?? 0)), faults \(faults), "
                        + "checks \(checks), \(totals.operations) operations, \(totals.faults.values.reduce(0, +)) "
                        + "faults injected (\(faultSummary.joined(separator: ", "))), \(totals.violations) invariant "
                        + "violations in \(failures.count) seeds, \(ContinuousClock.now - started)")
                fflush(nil)  // a soak's output goes to a file: each figure line is there at once
            }
        }
        let faultSummary = totals.faults.sorted { $0.key < $1.key }.map { "\($0.key.rawValue) \($0.value)" }
        print(
            "simulation: \(totals.runs) seeds (\(seeds.first ?? 0)…\(seeds.last ?? 0)), faults \(faults), checks "
                + "\(checks), \(totals.operations) operations, \(totals.faults.values.reduce(0, +)) faults injected "
                + "(\(faultSummary.joined(separator: ", "))), \(totals.violations) invariant violations in "
                + "\(failures.count) seeds, \(ContinuousClock.now - started)")
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    /// The one-line command that replays a seed with the same settings.
    static func replayCommand(
        seed: UInt64, faults: FaultPlan, checks: InvariantChecks, shape: SimulationShape
    )
        -> String
    {
        var variables = ["SYNC_SIMULATION_SEEDS=\(seed)"]
        if faults != .passing { variables.append("SYNC_SIMULATION_FAULTS=\(faults)") }
        if checks != .passing { variables.append("SYNC_SIMULATION_CHECKS=\(checks)") }
        if shape.stepCount != SimulationShape().stepCount {
            variables.append("SYNC_SIMULATION_STEPS=\(shape.stepCount)")
        }
        return variables.joined(separator: " ") + " swift test --filter SimulationTests"
    }

    @Test func aScheduleIsAFunctionOfItsSeed() {
        let first = SimulationSchedule(seed: 7, shape: .init(), faults: .all).steps
        let again = SimulationSchedule(seed: 7, shape: .init(), faults: .all).steps
        let other = SimulationSchedule(seed: 8, shape: .init(), faults: .all).steps
        #expect(first == again)
        #expect(first != other)
    }

    @Test func aDisabledFaultKindIsNeverScheduled() {
        var plan = FaultPlan.all
        plan.enabled.remove(.serverRestart)
        plan.enabled.remove(.appCrash)
        for seed in UInt64(1)...50 {
            let steps = SimulationSchedule(seed: seed, shape: .init(), faults: plan).steps
            #expect(!steps.contains { $0.faultKinds.contains(.serverRestart) || $0.faultKinds.contains(.appCrash) })
        }
    }

    @Test func seedSelectionsParse() throws {
        #expect(try SeedSelection.parse("1234") == [1234])
        #expect(try SeedSelection.parse("3-5") == [3, 4, 5])
        #expect(try SeedSelection.parse("1,9") == [1, 9])
        #expect(try SeedSelection.parse("random:3")?.count == 3)
        #expect(try SeedSelection.parse(nil) == nil)
        #expect(throws: SeedSelection.Invalid.self) { try SeedSelection.parse("x") }
    }
}

/// Parses `SYNC_SIMULATION_SEEDS`.
enum SeedSelection {
    struct Invalid: Error, CustomStringConvertible {
        let text: String
        var description: String { "SYNC_SIMULATION_SEEDS=\(text): expected 1234, 1,5,9, 1-10000 or random:500" }
    }

    static func parse(_ text: String?) throws -> [UInt64]? {
        guard let text, !text.isEmpty else { return nil }
        if text.hasPrefix("random:") {
            guard let count = Int(text.dropFirst("random:".count)), count > 0 else { throw Invalid(text: text) }
            let start = UInt64.random(in: 1...(UInt64(1) << 40))
            return (0..<UInt64(count)).map { start + $0 }
        }
        var seeds: [UInt64] = []
        for part in text.split(separator: ",") {
            let bounds = part.split(separator: "-")
            if bounds.count == 2, let low = UInt64(bounds[0]), let high = UInt64(bounds[1]), low <= high {
                seeds += Array(low...high)
            } else if bounds.count == 1, let seed = UInt64(bounds[0]) {
                seeds.append(seed)
            } else {
                throw Invalid(text: text)
            }
        }
        return seeds
    }
}
