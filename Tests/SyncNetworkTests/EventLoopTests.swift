import Foundation
import SyncStreams
import Testing

@testable import SyncNetwork

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The event loop with each poller: readiness reaches the handler, tasks and timers run on the loop's
/// thread in order, and stopping ends the thread. Timer order is checked with deadlines taken from one
/// instant, never by racing two delays.
@Suite(.timeLimit(.minutes(5))) struct EventLoopTests {
    final class PipeReader: EventLoopHandler, @unchecked Sendable {
        let descriptor: Int32
        let received = Locked<[UInt8]>([])
        let onRead: @Sendable () -> Void
        init(descriptor: Int32, onRead: @escaping @Sendable () -> Void) {
            self.descriptor = descriptor
            self.onRead = onRead
        }
        func handle(_ readiness: Readiness) {
            var buffer = [UInt8](repeating: 0, count: 16)
            let count = read(descriptor, &buffer, buffer.count)
            if count > 0 {
                received.withLock { $0 += buffer[0..<count] }
                onRead()
            }
        }
    }

    static func pollers() -> [@Sendable () throws -> any Poller] {
        #if os(Linux)
            return [{ PollPoller() }, { try EpollPoller() }]
        #else
            return [{ PollPoller() }]
        #endif
    }

    @Test("readiness reaches the handler on the loop's thread, with each poller", arguments: 0..<pollers().count)
    func readiness(poller index: Int) async throws {
        let loop = try EventLoop(name: "EventLoopTests", poller: try Self.pollers()[index]())
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        let readEnd = ends[0]
        Socket.configure(readEnd, nonBlocking: true)
        defer {
            close(ends[0])
            close(ends[1])
        }
        let (readStream, readContinuation) = AsyncStream<Void>.makeStream()
        let reader = PipeReader(descriptor: ends[0]) { readContinuation.yield() }
        let onLoop = Locked<Bool?>(nil)
        loop.execute {
            loop.register(readEnd, reader, readable: true, writable: false)
            onLoop.withLock { $0 = loop.inLoop }
        }
        #expect(!loop.inLoop)
        var bytes: [UInt8] = [7, 8, 9]
        _ = write(ends[1], &bytes, 3)
        var reads = readStream.makeAsyncIterator()
        await reads.next()
        #expect(reader.received.withLock { $0 } == [7, 8, 9])
        #expect(onLoop.withLock { $0 } == true)
        loop.execute { loop.unregister(readEnd) }
        await loop.stop()
    }

    @Test(
        "due timers run in deadline order, a cancelled one never, one not yet due not yet",
        arguments: 0..<pollers().count)
    func timers(poller index: Int) async throws {
        let loop = try EventLoop(name: "EventLoopTests", poller: try Self.pollers()[index]())
        let order = Locked<[String]>([])
        let (done, finished) = AsyncStream<Void>.makeStream()
        loop.execute {
            // Deadlines from one instant, so a stalled thread cannot reorder them: whenever they run, the
            // earlier deadline runs first, even when both are overdue by then.
            let base = ContinuousClock.now
            loop.schedule(at: base + .milliseconds(20)) {
                order.withLock { $0.append("later") }
                finished.yield()
            }
            let cancelled = loop.schedule(at: base + .milliseconds(10)) { order.withLock { $0.append("cancelled") } }
            loop.schedule(at: base + .milliseconds(1)) { order.withLock { $0.append("sooner") } }
            loop.schedule(at: base + .seconds(3600)) { order.withLock { $0.append("in an hour") } }
            // Two already due when the loop next looks, scheduled in the opposite order of their deadlines.
            loop.schedule(at: base - .milliseconds(1)) { order.withLock { $0.append("overdue b") } }
            loop.schedule(at: base - .milliseconds(2)) { order.withLock { $0.append("overdue a") } }
            loop.cancelTimer(cancelled)
            order.withLock { $0.append("task") }
        }
        var doneIterator = done.makeAsyncIterator()
        await doneIterator.next()
        // A task handed over now runs after "later" (it was due and ran), before "in an hour".
        let (probe, probed) = AsyncStream<Void>.makeStream()
        loop.execute {
            order.withLock { $0.append("probe") }
            probed.yield()
        }
        var probeIterator = probe.makeAsyncIterator()
        await probeIterator.next()
        #expect(order.withLock { $0 } == ["task", "overdue a", "overdue b", "sooner", "later", "probe"])
        await loop.stop()
        #expect(!order.withLock { $0 }.contains("in an hour"))
    }

    @Test(
        "a timer cancelled by an earlier timer due in the same round does not run; one a timer schedules runs in a later round",
        arguments: 0..<pollers().count)
    func aTimerCancelledByAnEarlierTimerOfTheSameRoundDoesNotRun(poller index: Int) async throws {
        let loop = try EventLoop(name: "EventLoopTests", poller: try Self.pollers()[index]())
        let order = Locked<[String]>([])
        let (done, finished) = AsyncStream<Void>.makeStream()
        loop.execute {
            // Both overdue when the loop next looks: one round runs them, the first cancelling the second.
            let base = ContinuousClock.now
            var second: UInt64 = 0
            loop.schedule(at: base - .milliseconds(2)) {
                order.withLock { $0.append("first") }
                loop.cancelTimer(second)
                loop.schedule(at: base - .milliseconds(3)) {
                    order.withLock { $0.append("scheduled by first, overdue") }
                    finished.yield()
                }
            }
            second = loop.schedule(at: base - .milliseconds(1)) { order.withLock { $0.append("cancelled by first") } }
        }
        var iterator = done.makeAsyncIterator()
        await iterator.next()
        #expect(order.withLock { $0 } == ["first", "scheduled by first, overdue"])
        await loop.stop()
        #expect(!order.withLock { $0 }.contains("cancelled by first"))
    }

    /// Set when its instance is released.
    final class Probe: Sendable {
        let released: Locked<Bool>
        init(_ released: Locked<Bool>) { self.released = released }
        deinit { released.withLock { $0 = true } }
    }

    @Test("stop runs the tasks handed over before it; tasks handed over after it are released unrun")
    func stop() async throws {
        let loop = try EventLoop(name: "EventLoopTests")
        let ran = Locked<[String]>([])
        loop.execute { ran.withLock { $0.append("before stop") } }
        await loop.stop()
        #expect(ran.withLock { $0 } == ["before stop"])
        // Dropped, not queued for a thread that is gone: the task (and what it holds) is released at once.
        let released = Locked(false)
        do {
            let probe = Probe(released)
            loop.execute { [probe] in
                _ = probe
                ran.withLock { $0.append("after stop") }
            }
        }
        #expect(released.withLock { $0 })
        #expect(ran.withLock { $0 } == ["before stop"])
        // Stopping again returns at once.
        await loop.stop()
    }
}
