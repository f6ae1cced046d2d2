import Foundation
import SyncServer
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

@Suite("asyncOpen: invalidating its token", .timeLimit(.minutes(5)))
struct AsyncOpenInvalidationTests {
    /// A name for each state, for comparing sequences.
    private static func kind(_ state: AsyncOpenState) -> String {
        switch state {
        case .connecting: "connecting"
        case .waitingForUser: "waitingForUser"
        case .progress: "progress"
        case .open: "open"
        case .error: "error"
        }
    }

    @Test(
        "invalidating the token before the open finishes: nothing more is delivered (no .open, no timeout), its timer is cancelled, the session stays open"
    )
    func invalidatingBeforeTheOutcome() async throws {
        let fixture = try await EngineFixture(faults: .init(delayMessages: true))
        defer { fixture.directory.remove() }
        let user = try await fixture.app.login(.anonymous)
        let states = Collected(user.asyncOpen(partition: "p", timeout: .seconds(30)))
        // The welcome is held in transit: the open cannot finish yet.
        try await eventually("waiting for the user") { states.values.map(Self.kind).contains("waitingForUser") }
        try await eventually("the timeout is armed") { fixture.timers.scheduledDelays.contains(.seconds(30)) }
        let pendingBefore = fixture.timers.pendingCount
        let delivered = states.values.map(Self.kind)

        states.token.invalidate()
        #expect(fixture.timers.pendingCount == pendingBefore - 1, "the 30 s timeout was not cancelled")

        // What would have ended the open either way now happens: the timeout's time passes, and the
        // server's messages arrive, so the session downloads everything.
        fixture.timers.advance(by: .seconds(30))
        fixture.transport.deliverDelayedMessages()
        let session = try #require(user.session(for: "p"))
        try await session.wait(for: .download)
        #expect(session.state.value == .active)
        #expect(session.connectionState.value == .connected)
        // One more delivery round through the (immediate) callback executor: still nothing new.
        try await session.engine.flushed()
        #expect(states.values.map(Self.kind) == delivered, "\(states.values)")
        #expect(!states.isFinished)
    }
}
