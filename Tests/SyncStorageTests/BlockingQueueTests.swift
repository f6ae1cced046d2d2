import SyncStorage
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What `BlockingQueue.run` hands back: an object built on the queue's thread and read on the awaiting
/// task's, as `StoreFile.open` hands back the `StoreFile` it builds on its queue.
private final class Built: Sendable {
    let path: String
    let number: Int

    init(number: Int) {
        self.path = "/store/\(number)"
        self.number = number
    }
}

@Suite struct BlockingQueueTests {
    /// The reproduction of issue 20's ThreadSanitizer report at `StoreFile.swift:65`, run under
    /// `swift test --sanitize=thread --filter BlockingQueueTests`. When the work resumes the continuation
    /// before the awaiting task has suspended (here forced: the task sleeps 2 ms after queuing it; in CI,
    /// a preempted thread on a loaded machine), the task goes on through the concurrency runtime's
    /// already-resumed path, which synchronizes through an atomic TSan cannot see: every read below of what
    /// the queue's thread wrote was reported as a data race. Handing the result over through a pthread mutex
    /// gives TSan the edge. Without a sanitizer it checks that every value arrives intact.
    @Test("an object built on the queue reaches a task that had not suspended yet, with an edge TSan sees")
    func handsOffWhatTheQueueBuiltBeforeTheTaskSuspended() async {
        let queue = BlockingQueue(label: "BlockingQueueTests.early")
        for number in 0..<50 {
            let built = await queue.run({ Built(number: number) }, afterEnqueue: { usleep(2_000) })
            #expect(built.number == number)
            #expect(built.path == "/store/\(number)")
        }
    }

    @Test("an object built on the queue reaches the task that suspended for it")
    func handsOffWhatTheQueueBuilt() async {
        let queue = BlockingQueue(label: "BlockingQueueTests")
        for number in 0..<500 {
            let built = await queue.run { Built(number: number) }
            #expect(built.number == number)
            #expect(built.path == "/store/\(number)")
        }
    }

    @Test func throwsWhatTheBodyThrows() async {
        struct Failed: Error, Equatable {}
        let queue = BlockingQueue(label: "BlockingQueueTests.throws")
        await #expect(throws: Failed()) {
            try await queue.run { () throws(Failed) -> Int in throw Failed() }
        }
    }
}
