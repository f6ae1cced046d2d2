import Dispatch
import Foundation
import SyncStreams
import TestSupport
import Testing

@testable import SyncEngine

/// Finding 12 of docs/RELIABILITY.md (seeds 2823, 3229, …: "changeset 1 delivered twice" after a
/// `historyLost` reset right after the app opened): a changesets subscriber's delivery that read a
/// changeset from the store a client reset then replaced must reach the subscriber before `didReset`,
/// never after it — a subscriber forgets the old history at `didReset`, so an old changeset arriving later
/// counts as the new history's, and the new log's version 1 then comes "twice".
@Suite("Changesets feed and client reset order", .timeLimit(.minutes(5)))
struct ResetFeedOrderTests {
    @Test("a changeset read from the old store before a client reset replaced it is delivered before didReset")
    func deliveryInFlightPrecedesDidReset() async throws {
        // Callbacks run on the thread that causes them (as in the simulation): the feed's replay on the
        // subscribing thread, the reset's announcement on the engine's.
        let scenario = try await ExpiredReaderScenario.start(configureA: { $0.callbackExecutor = ImmediateExecutor() })
        defer { scenario.remove() }
        let session = scenario.session

        let order = Locked<[String]>([])
        // Signalled by whichever comes first: `didReset` (the old code: the reset announced itself while a
        // delivery of the old store was under way) or the reset waiting for that delivery (the fix).
        let resetWentOn = DispatchSemaphore(value: 0)
        let resetToken = session.clientResets.subscribe(
            onValue: { event in
                guard case .didReset = event else { return }
                order.withLock { $0.append("didReset") }
                resetWentOn.signal()
            }, onCompletion: { _ in })
        defer { resetToken.invalidate() }
        session.engine.feed.settlingForTests.withLock { $0 = { resetWentOn.signal() } }
        // The replay of version 1 has read its bytes and holds on, as a slow thread would, until the reset
        // went on one way or the other. It runs on the subscribing thread, which `offPool` made: blocking it
        // holds no thread of the cooperative pool. The deadline only keeps a regression from hanging.
        let reading = Locked(false)
        let waitedOut = Locked(false)
        let heldOnPool = Locked(false)
        let limit = 60 * BuildFlavor.deadlineScale
        let subscriber = "subscribe to the changesets"
        session.engine.feed.beforeDeliveryForTests.withLock {
            $0 = { _ in
                // Held only on the test's own thread: never a thread of the cooperative pool.
                guard DedicatedThread.current == subscriber else { return heldOnPool.withLock { $0 = true } }
                reading.withLock { $0 = true }
                if resetWentOn.wait(timeout: .now() + limit) == .timedOut { waitedOut.withLock { $0 = true } }
            }
        }
        let subscribed = Task {
            try await offPool(subscriber) {
                session.changesets.subscribe(
                    onValue: { changeset in order.withLock { $0.append("changeset \(changeset.serverVersion)") } },
                    onCompletion: { _ in })
            }
        }
        try await eventually("the replay read version 1") { reading.withLock { $0 } }
        session.engine.feed.beforeDeliveryForTests.withLock { $0 = nil }
        session.resume()
        let token = try await subscribed.value
        defer { token.invalidate() }
        try await eventually("reset") { order.withLock { $0.contains("didReset") } }
        #expect(!heldOnPool.withLock { $0 }, "the first delivery ran on another thread than the subscribing one")
        #expect(!waitedOut.withLock { $0 }, "the held delivery saw neither didReset nor the reset wait for it")
        let seen = order.withLock { $0 }
        let delivered = try #require(seen.firstIndex(of: "changeset 1"), "version 1 was delivered: \(seen)")
        #expect(delivered < seen.firstIndex(of: "didReset")!, "delivered after didReset: \(seen)")
        try await scenario.close()
    }
}
