import Dispatch
import SyncStreams
import TestSupport
import Testing

@Suite(.offPool) struct DispatchQueueExecutorTests {
    @Test func executeRunsTheWorkOnTheQueueInOrder() {
        let queue = DispatchQueue(label: "SyncStreamsTests.execute")
        let executor: any StreamExecutor = queue
        let order = LockedBox<[Int]>([])
        let done = DispatchSemaphore(value: 0)
        for index in 0..<100 {
            executor.execute {
                dispatchPrecondition(condition: .onQueue(queue))
                order.mutate { $0.append(index) }
                if index == 99 { done.signal() }
            }
        }
        #expect(done.waitWithDeadline())
        #expect(order.value == Array(0..<100))
    }

    @Test func scheduledWorkRunsOnTheQueue() {
        let queue = DispatchQueue(label: "SyncStreamsTests.schedule")
        let ran = DispatchSemaphore(value: 0)
        let onQueue = AtomicFlag()
        let work = queue.schedule(after: .milliseconds(1)) {
            dispatchPrecondition(condition: .onQueue(queue))
            onQueue.set()
            ran.signal()
        }
        #expect(ran.waitWithDeadline())
        #expect(onQueue.isSet)
        work.cancel()
    }

    @Test(
        "cancelled scheduled work does not run: the queue is blocked from before it is scheduled until after the cancel"
    )
    func cancelledScheduledWorkDoesNotRun() {
        let queue = DispatchQueue(label: "SyncStreamsTests.cancel")
        let blocker = DispatchSemaphore(value: 0)
        let blocked = DispatchSemaphore(value: 0)
        queue.async {
            blocked.signal()
            _ = blocker.waitWithDeadline()
        }
        #expect(blocked.waitWithDeadline())
        // The serial queue is busy: however late this thread gets to the cancel, the work cannot run first.
        let cancelledRan = AtomicFlag()
        weak var released: Canary?
        let cancelled: ScheduledWork = {
            let canary = Canary()
            released = canary
            return queue.schedule(after: .milliseconds(1)) { withExtendedLifetime(canary) { cancelledRan.set() } }
        }()
        cancelled.cancel()
        cancelled.cancel()
        #expect(released == nil)  // what it captured is released at once
        blocker.signal()
        // Due after the cancelled work, on the same serial queue: once it ran, the cancelled work had its turn.
        let ran = DispatchSemaphore(value: 0)
        _ = queue.schedule(after: .milliseconds(20)) { ran.signal() }
        #expect(ran.waitWithDeadline())
        #expect(!cancelledRan.isSet)
    }

    @Test func cancelWhileTheQueueIsBusyPreventsWorkAlreadyDue() {
        let queue = DispatchQueue(label: "SyncStreamsTests.busy")
        let blocker = DispatchSemaphore(value: 0)
        let blocked = DispatchSemaphore(value: 0)
        queue.async {
            blocked.signal()
            _ = blocker.waitWithDeadline()
        }
        #expect(blocked.waitWithDeadline())
        let cancelledRan = AtomicFlag()
        let cancelled = queue.schedule(after: .zero) { cancelledRan.set() }
        cancelled.cancel()
        blocker.signal()
        let ran = DispatchSemaphore(value: 0)
        _ = queue.schedule(after: .milliseconds(20)) { ran.signal() }
        #expect(ran.waitWithDeadline())
        #expect(!cancelledRan.isSet)
    }

    @Test func mainIsTheMainQueue() {
        func erase(_ executor: some StreamExecutor) -> any StreamExecutor { executor }
        let executor = erase(.main)
        // On Linux `DispatchQueue.main` may hand out a new wrapper object each time: compare the labels.
        #expect((executor as? DispatchQueue)?.label == DispatchQueue.main.label)
    }

    @Test func nowIsMonotonic() {
        let queue = DispatchQueue(label: "SyncStreamsTests.now")
        let first = queue.now
        let second = queue.now
        #expect(second >= first)
    }
}
