import Foundation
import SyncServer
import TestSupport
import Testing

@testable import SyncEngine

/// The public timing configuration, with non-default values, in virtual time: each test fails if the
/// engine used the default instead.
@Suite("Timing configuration", .timeLimit(.minutes(5)))
struct TimingConfigurationTests {
    @Test("pingInterval 5 s and pongTimeout 7 s: a ping after 5 s, and a missing pong fails the connection 7 s later")
    func pingAndPong() async throws {
        let timing = EngineTiming(pingInterval: .seconds(5), pongTimeout: .seconds(7))
        let fixture = try await EngineFixture(timing: timing)
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        try await eventually("connected") { session.connectionState.value == .connected }
        try await eventually("ping scheduled in 5 s") { fixture.timers.nextDueTime == fixture.timers.now + .seconds(5) }
        fixture.transport.faults.swallowPongs = true
        fixture.timers.advance(by: .seconds(5))
        try await eventually("pong timeout armed for 7 s") {
            fixture.timers.nextDueTime == fixture.timers.now + .seconds(7)
        }
        fixture.timers.advance(by: .seconds(7))
        try await eventually("pong timed out") { fixture.errors.values.map(\.error) == [.pongTimedOut] }
    }

    @Test("connectTimeout 3 s: an attempt that never opens fails after 3 s")
    func connectTimeout() async throws {
        let fixture = try await EngineFixture(
            faults: .init(hold: true), timing: EngineTiming(connectTimeout: .seconds(3)))
        defer { fixture.directory.remove() }
        _ = try await fixture.open()
        try await eventually("connect timeout armed for 3 s") { fixture.timers.nextDueTime == .zero + .seconds(3) }
        fixture.timers.advance(by: .seconds(3))
        try await eventually("timed out") { fixture.errors.values.map(\.error) == [.connectTimedOut] }
    }

    @Test("backoff 250 ms ×3 up to 2 s: refused attempts wait 250 ms, 750 ms, 2 s, 2 s")
    func backoff() async throws {
        let timing = EngineTiming(
            backoff: ReconnectBackoff(initialDelay: .milliseconds(250), multiplier: 3, maximumDelay: .seconds(2)))
        let fixture = try await EngineFixture(faults: .init(refuse: true), timing: timing)
        defer { fixture.directory.remove() }
        _ = try await fixture.open()
        for (step, delay) in [Duration.milliseconds(250), .milliseconds(750), .seconds(2), .seconds(2)].enumerated() {
            try await eventually("reconnect \(step) in \(delay)") {
                fixture.timers.nextDueTime == fixture.timers.now + delay
            }
            fixture.timers.advance(by: delay)
            try await eventually("attempt \(step + 2)") { fixture.transport.attempts == step + 2 }
        }
    }

    @Test(
        "jitterFraction: the delay is shortened by jitterFraction × random, never lengthened",
        arguments: [0.0, 0.5, 1.0])
    func jitter(random: Double) async throws {
        let timing = EngineTiming(backoff: ReconnectBackoff(initialDelay: .seconds(8), jitterFraction: 0.5))
        let fixture = try await EngineFixture(random: { random }, faults: .init(refuse: true), timing: timing)
        defer { fixture.directory.remove() }
        _ = try await fixture.open()
        let expected = Duration.seconds(8) - .seconds(8) * (0.5 * random)
        try await eventually("reconnect in \(expected)") { fixture.timers.nextDueTime == fixture.timers.now + expected }
    }
}
