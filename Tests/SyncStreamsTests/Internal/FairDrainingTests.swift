import Dispatch
import Foundation
import TestSupport
import Testing

@testable import SyncStreams

/// A drain is bounded: nobody is held delivering someone else's values forever, and nothing is lost
/// when a drain hands the rest on.
@Suite(.offPool) struct FairDrainingTests {
    @Test func aThreadThatSentOneValueIsNotHeldDeliveringAnotherThreadsFlood() {
        let subject = PassthroughSubject<Int, Never>()
        let zeroInDelivery = DispatchSemaphore(value: 0)
        let floodStarted = DispatchSemaphore(value: 0)
        let senderThread = LockedBox<ThreadID?>(nil)
        let deliveredOnSender = AtomicCounter()
        let received = LockedBox<[Int]>([])
        let token = subject.subscribe { value in
            if ThreadID.current == senderThread.value { deliveredOnSender.increment() }
            received.mutate { $0.append(value) }
            if value == 0 {  // hold the drain until the flood runs
                zeroInDelivery.signal()
                _ = floodStarted.waitWithDeadline()
            }
        }
        let flood = BuildFlavor.iterations(100_000, sanitized: 20_000)
        let sender = startThread {
            // Counted only while its send() runs: once the thread has ended, a new thread (a Dispatch
            // worker delivering the handed-on rest) may reuse its identity.
            senderThread.value = ThreadID.current
            subject.send(0)
            senderThread.value = nil
        }
        let flooder = startThread {
            // Flood only once 0 is being delivered, so the order the subscriber must see is 0...flood.
            // The first value is queued behind 0 before the drain goes on, so the sender's drain
            // always has the flood to hand on.
            guard zeroInDelivery.waitWithDeadline() else { return }
            subject.send(1)
            floodStarted.signal()
            for value in 2...flood { subject.send(value) }
        }
        #expect(sender.waitWithDeadline(), "the sender's send() never returned")
        #expect(flooder.waitWithDeadline())
        // The sender's drain delivered its own value and at most a budget's worth of the flood.
        #expect(deliveredOnSender.value <= 1 + DeliveryState<Int, Never>.inlineForeignBudget + 1)
        #expect(eventually { received.value.count == flood + 1 }, "values were lost")
        #expect(received.value == Array(0...flood), "values were reordered")
        token.invalidate()
    }

    /// The inline budget is a time, not only a count: another thread's values whose callbacks are slow
    /// (2 ms each, real work: the subscribers block) hold the sender for about the 1 ms slice and the
    /// event in progress — not for 4,096 of them. Two subscribers, so each value is an event of its own
    /// (runs of values form only for one subscriber). The claim is a count, whatever the machine's speed:
    /// every foreign event takes longer than the whole slice.
    @Test func aThreadThatSentOneValueIsNotHeldLongerThanItsSliceBySlowForeignCallbacks() {
        let subject = PassthroughSubject<Int, Never>()
        let zeroInDelivery = DispatchSemaphore(value: 0)
        let foreignQueued = DispatchSemaphore(value: 0)
        let senderThread = LockedBox<ThreadID?>(nil)
        let deliveredOnSender = LockedBox<Set<Int>>([])
        let received = LockedBox<[Int]>([])
        let foreignCount = 20
        let slow = { @Sendable (value: Int, holds: Bool) in
            if ThreadID.current == senderThread.value { deliveredOnSender.mutate { _ = $0.insert(value) } }
            if value == 0 {
                guard holds else { return }
                zeroInDelivery.signal()
                _ = foreignQueued.waitWithDeadline()  // hold the drain until the other thread queued its values
            } else {
                Thread.sleep(forTimeInterval: 0.002)  // a slow callback: longer than the slice
            }
        }
        let first = subject.subscribe { value in
            received.mutate { $0.append(value) }
            slow(value, true)
        }
        let second = subject.subscribe { value in slow(value, false) }
        let sender = startThread {
            senderThread.value = ThreadID.current
            subject.send(0)
            senderThread.value = nil
        }
        let other = startThread {
            guard zeroInDelivery.waitWithDeadline() else { return }
            for value in 1...foreignCount { subject.send(value) }  // queued behind 0: the sender's drain has them
            foreignQueued.signal()
        }
        #expect(sender.waitWithDeadline(), "the sender's send() never returned")
        #expect(other.waitWithDeadline())
        let onSender = deliveredOnSender.value.subtracting([0])
        #expect(
            onSender.count <= 1,
            "the sender delivered \(onSender.count) of the other thread's slow events (its slice is 1 ms)")
        #expect(eventually { received.value.count == foreignCount + 1 }, "values were lost")
        #expect(received.value == Array(0...foreignCount), "values were reordered")
        first.invalidate()
        second.invalidate()
    }

    @Test func anExecutorJobDeliversWhatWasQueuedWhenItStartedThenSchedulesTheRest() {
        let executor = TestExecutor()
        let subject = PassthroughSubject<Int, Never>()
        let received = LockedBox<[Int]>([])
        let queued = 1_000
        let budget = DeliveryState<Int, Never>.scheduledExtraBudget
        let arriving = budget + 10  // more arrive while the job runs than its extra budget
        let token = subject.observe(on: executor).subscribe { value in
            received.mutate { $0.append(value) }
            if value == 1 {
                for extra in 1...arriving { subject.send(queued + extra) }
            }
        }
        for value in 1...queued { subject.send(value) }
        #expect(executor.pendingCount == 1)
        executor.run(limit: 1)
        #expect(
            received.value == Array(1...(queued + budget)),
            "the job did not stop at what was queued when it started plus its budget")
        #expect(executor.pendingCount == 1, "the rest was not scheduled as a new job")
        executor.run(limit: 1)
        #expect(received.value == Array(1...(queued + arriving)))
        #expect(executor.pendingCount == 0)
        token.invalidate()
    }

    @Test func anExecutorJobWithLittleQueuedStillDeliversWhatArrivesWithinItsBudget() {
        let executor = TestExecutor()
        let subject = PassthroughSubject<Int, Never>()
        let received = LockedBox<[Int]>([])
        let token = subject.observe(on: executor).subscribe { value in
            received.mutate { $0.append(value) }
            if value == 1 { subject.send(2) }  // arrives while the job runs: within its budget
        }
        subject.send(1)
        executor.run(limit: 1)
        #expect(received.value == [1, 2], "a producer slightly slower than its consumer costs a job per value")
        #expect(executor.pendingCount == 0)
        token.invalidate()
    }

    /// Two streams deliver on one serial executor; one of them is a flood whose producer keeps pace with
    /// its slow consumer (each callback takes 0.3 ms by the executor's clock and the next value arrives
    /// meanwhile). The other stream's value, queued behind the flood's job, waits for the flood's time
    /// slice only — not for the whole flood, which its budget alone would allow.
    @Test func aJobOnASharedExecutorYieldsToItsOtherWorkOnceItsTimeSliceIsOver() {
        let executor = ManualClockExecutor()
        let flood = PassthroughSubject<Int, Never>()
        let other = PassthroughSubject<String, Never>()
        let received = LockedBox<[String]>([])
        let callbackTime = Duration.microseconds(300)
        let floodCount = 100
        let floodToken = flood.observe(on: executor).subscribe { value in
            received.mutate { $0.append("\(value)") }
            if value == 1 { other.send("other") }  // queued on the executor behind the flood's job
            executor.advance(by: callbackTime)
            if value < floodCount { flood.send(value + 1) }  // arrives while the job runs
        }
        let otherToken = other.observe(on: executor).subscribe { value in received.mutate { $0.append(value) } }
        flood.send(1)
        #expect(executor.runAll(limit: 1_000), "the executor never ran out of jobs")
        let slice = DeliveryState<Int, Never>.scheduledSlice
        let floodValuesInSlice = Int((slice / callbackTime).rounded(.up))  // the job sees its slice is over after these
        #expect(
            received.value.firstIndex(of: "other") == floodValuesInSlice,
            "the other stream's value waited for more than the flood's time slice")
        #expect(received.value.filter { $0 != "other" } == (1...floodCount).map { "\($0)" })
        floodToken.invalidate()
        otherToken.invalidate()
    }

    /// An executor that runs a job inside `execute` (`ImmediateExecutor`) gains nothing from a drain that
    /// hands the rest to a new job: that job would run nested in the drain, one level deeper on the same
    /// stack each time, until a long enough flood overflows it. Such a relay drains without bounds.
    @Test func aRelayOnAnInlineExecutorDrainsAFloodWithoutNesting() {
        let relay = Relay<Int, Never, Void>(extra: (), executor: ImmediateExecutor())
        let flood = 3 * DeliveryState<Int, Never>.scheduledExtraBudget + 10
        let depths = LockedBox<[Int: Int]>([:])
        let received = LockedBox(0)
        let subscriber = relay.attach(
            onValue: { value in
                received.mutate { $0 += 1 }
                if value == 2 || value == flood {  // both delivered by the drain's loop
                    depths.mutate { $0[value] = Thread.callStackReturnAddresses.count }
                }
                if value == 1 { for next in 2...flood { relay.send(next) } }  // queued behind 1
            },
            onCompletion: { _ in })
        relay.send(1)
        #expect(received.value == flood)
        let first = depths.value[2]
        let last = depths.value[flood]
        #expect(
            first != nil && first == last,
            "the drain nested: stack depth \(String(describing: first)) → \(String(describing: last))")
        relay.remove(subscriber, waiting: false)
    }

    /// The same for any executor that runs jobs inside `execute`, not only the `ImmediateExecutor` type:
    /// the relay notices that the job runs on the thread still inside `execute`.
    @Test func aRelayOnAnyExecutorThatRunsJobsInlineDrainsAFloodWithoutNesting() {
        let relay = Relay<Int, Never, Void>(extra: (), executor: CallerRunsExecutor())
        let flood = 3 * DeliveryState<Int, Never>.scheduledExtraBudget + 10
        let depths = LockedBox<[Int: Int]>([:])
        let received = LockedBox(0)
        let subscriber = relay.attach(
            onValue: { value in
                received.mutate { $0 += 1 }
                if value == 2 || value == flood {  // both delivered by the drain's loop
                    depths.mutate { $0[value] = Thread.callStackReturnAddresses.count }
                }
                if value == 1 { for next in 2...flood { relay.send(next) } }  // queued behind 1
            },
            onCompletion: { _ in })
        relay.send(1)
        #expect(received.value == flood)
        let first = depths.value[2]
        let last = depths.value[flood]
        #expect(
            first != nil && first == last,
            "the drain nested: stack depth \(String(describing: first)) → \(String(describing: last))")
        relay.remove(subscriber, waiting: false)
    }
}

/// A user's executor that runs each job on the calling thread, inside `execute` (as `ImmediateExecutor`
/// does, but another type).
private struct CallerRunsExecutor: StreamExecutor {
    func execute(_ work: @escaping @Sendable () -> Void) { work() }

    func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
        preconditionFailure("not used")
    }

    var now: StreamInstant { .monotonicNow }
}
