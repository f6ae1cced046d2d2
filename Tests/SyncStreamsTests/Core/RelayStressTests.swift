import Dispatch
import TestSupport
import Testing

@testable import SyncStreams

/// Subscribing and invalidating while another thread delivers: the relay then copies its subscriber
/// array instead of changing it in place (the drainer reads it without retaining), so this is where a
/// memory-safety bug would show — under ThreadSanitizer in CI.
@Suite(.offPool) struct RelayStressTests {
    @Test func subscribersComeAndGoWhileAnotherThreadSends() {
        let subject = PassthroughSubject<Int, Never>()
        let steady = Recorder<Int, Never>()
        let steadyToken = steady.subscribe(to: subject)
        let sent = BuildFlavor.iterations(20_000, sanitized: 5_000)
        let rounds = BuildFlavor.iterations(2_000, sanitized: 500)
        let orderViolations = AtomicCounter()

        // Two threads of their own (not tasks: on a 2-thread pool they may not run at the same time).
        let finished = runOnThreads(2) { lane in
            if lane == 0 {
                for value in 0..<sent { subject.send(value) }
            } else {
                for round in 0..<rounds {
                    let last = LockedBox(-1)
                    let token = subject.subscribe { value in
                        let previous = last.value
                        if value <= previous { _ = orderViolations.increment() }
                        last.value = value
                    }
                    if round % 2 == 0 { token.invalidate() }
                    // Odd rounds: the token is released here, which invalidates too.
                }
            }
        }
        #expect(finished)
        #expect(orderViolations.value == 0)
        #expect(steady.values == Array(0..<sent))
        subject.send(completion: .finished)
        #expect(steady.isCompleted)
        #expect(!subject.hasSubscribers)
        steadyToken.invalidate()
    }

    @Test func reentrantSubscribeAndInvalidateDuringFanOut() {
        let subject = PassthroughSubject<Int, Never>()
        let late = Recorder<Int, Never>()
        let holder = TokenHolder()
        let lateTokens = LockedBox<[SubscriptionToken]>([])
        var tokens: [SubscriptionToken] = []
        for index in 0..<8 {
            tokens.append(
                subject.subscribe { value in
                    if index == 3, value == 1 {
                        // Subscribe from inside the fan-out: receives only later values.
                        lateTokens.mutate { $0.append(late.subscribe(to: subject)) }
                    }
                    if index == 5, value == 1 { holder.token?.invalidate() }
                }
            )
        }
        let victim = Recorder<Int, Never>()
        holder.token = victim.subscribe(to: subject)
        subject.send(1)
        subject.send(2)
        #expect(late.values == [2])
        #expect(victim.values == [])  // invalidated by subscriber 5 before its turn for value 1
        tokens.forEach { $0.invalidate() }
        lateTokens.value.forEach { $0.invalidate() }
    }
}

/// A relay's lock biased to the thread that used it alone (see `ParkingLock`), then shared: every value is
/// still delivered once, serialized, in each sender's order, and an invalidation from another thread still
/// waits for the callback in flight.
@Suite(.offPool) struct BiasedRelayTests {
    @Test func aSubjectFedByOneThreadThenByFourDeliversEveryValueOnceInEachSendersOrder() {
        let subject = PassthroughSubject<Int, Never>()
        let checker = SerialChecker()
        let lastBySender = LockedBox<[Int]>(Array(repeating: -1, count: 4))
        let outOfOrder = AtomicCounter()
        let received = AtomicCounter()
        let token = subject.subscribe { value in
            checker.enter()
            let sender = value / 1_000_000
            let index = value % 1_000_000
            lastBySender.mutate { last in
                if index <= last[sender] { _ = outOfOrder.increment() }
                last[sender] = index
            }
            _ = received.increment()
            checker.leave()
        }
        let alone = 1_000  // far more than a bias needs
        let perThread = BuildFlavor.iterations(20_000, sanitized: 2_000)
        let biased = DispatchSemaphore(value: 0)
        let finished = runOnThreads(4) { sender in
            var next = 0
            if sender == 0 {
                while next < alone {
                    subject.send(next)
                    next += 1
                }
                for _ in 1..<4 { biased.signal() }
            } else {
                _ = biased.wait(timeout: .now() + threadDeadline)
            }
            for _ in 0..<perThread {
                subject.send(sender * 1_000_000 + next)
                next += 1
            }
        }
        #expect(finished)
        // A contended inline drain hands what is left to a job when its time slice ends, so the last
        // values may still be on their way when every send has returned.
        #expect(eventually { received.value >= alone + 4 * perThread }, "timed out waiting for every value")
        #expect(received.value == alone + 4 * perThread)
        #expect(outOfOrder.value == 0)
        #expect(checker.overlaps == 0)
        token.invalidate()
    }

    @Test func anInvalidateFromAnotherThreadWaitsForTheBiasedSendersCallback() {
        let subject = PassthroughSubject<Int, Never>()
        let blocking = BlockingCallback()
        let laterCallbacks = AtomicCounter()
        let invalidated = AtomicFlag()
        let token = subject.subscribe { value in
            if invalidated.isSet { _ = laterCallbacks.increment() }
            if value == 1_000 { blocking.run() }
        }
        let sender = startThread {
            for value in 0...1_000 { subject.send(value) }  // biased to this thread long before 1,000
            for value in 1_001...1_100 { subject.send(value) }
        }
        #expect(blocking.entered.wait(timeout: .now() + threadDeadline) == .success, "the callback never ran")
        let invalidator = startIdentifiedThread {
            token.invalidate()
            invalidated.set()
        }
        // The invalidating thread revoked the bias and now waits for the callback in flight.
        #expect(waitUntilWaiting(invalidator.thread), "invalidate() never started waiting for the callback")
        #expect(!invalidated.isSet, "invalidate() returned while the callback ran on the biased sender")
        blocking.release.signal()
        #expect(invalidator.done.waitWithDeadline(), "invalidate() never returned")
        #expect(blocking.returned.isSet, "invalidate() returned before the callback ended")
        #expect(sender.waitWithDeadline())
        #expect(laterCallbacks.value == 0, "a callback started after invalidate() returned")
    }
}
