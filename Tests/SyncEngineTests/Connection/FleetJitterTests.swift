import Foundation
import SyncStreams
import TestSupport
import Testing

@testable import SyncEngine

/// Issue 23 item 9: a fleet of clients that lose the server together does not come back in one burst.
/// Each app's timers run on its own `TestExecutor` (virtual time); the randomness is seeded.
@Suite(.timeLimit(.minutes(5))) struct FleetJitterTests {
    @Test("24 apps refused together with ReconnectBackoff.fleet schedule their reconnects across the whole second")
    func fleetReconnectsSpread() async throws {
        let seed: UInt64 = 0x0F1E_E723
        print("FleetJitterTests.fleetReconnectsSpread seed \(seed)")
        let generator = Locked(SeededGenerator(seed: seed))
        var delays: [Duration] = []
        for _ in 0..<24 {
            let random: @Sendable () -> Double = { generator.withLock { Double.random(in: 0..<1, using: &$0) } }
            // The fleet policy (1 s, full jitter), every attempt refused as by a server that restarts.
            let fixture = try await EngineFixture(
                random: random, faults: .init(refuse: true), timing: EngineTiming(backoff: .fleet))
            defer { fixture.directory.remove() }
            _ = try await fixture.open()
            try await eventually("the reconnect to be scheduled") {
                !fixture.errors.values.isEmpty && fixture.timers.nextDueTime != nil
            }
            let due = try #require(fixture.timers.nextDueTime)
            delays.append(due - fixture.timers.now)
            try await fixture.app.close()
        }
        let sorted = delays.sorted()
        print("FleetJitterTests.fleetReconnectsSpread delays \(sorted)")
        #expect(sorted.allSatisfy { $0 >= .zero && $0 <= .seconds(1) })
        // Spread over the second, not bunched in its last quarter (Realm's jitter: all in 0.75–1 s).
        #expect(sorted.first! < .milliseconds(250), "\(sorted)")
        #expect(sorted.filter { $0 < .milliseconds(750) }.count >= 12, "\(sorted)")
    }
}
