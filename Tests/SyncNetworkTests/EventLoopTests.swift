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
/// thread in order, and stopping ends the thread.
@Suite(.timeLimit(.minutes(1))) struct EventLoopTests {
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

    static func pollers() -> [@Sendable () -> any Poller] {
        #if os(Linux)
            return [{ PollPoller() }, { EpollPoller() }]
        #else
            return [{ PollPoller() }]
        #endif
    }

    @Test("readiness, tasks and timers, with each poller", arguments: 0..<pollers().count)
    func loop(poller index: Int) async throws {
        let loop = EventLoop(name: "EventLoopTests", poller: Self.pollers()[index]())
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        let readEnd = ends[0]
        Socket.configure(readEnd, nonBlocking: true)
        defer {
            close(ends[0])
            close(ends[1])
        }
        let order = Locked<[String]>([])
        let (readStream, readContinuation) = AsyncStream<Void>.makeStream()
        let reader = PipeReader(descriptor: ends[0]) { readContinuation.yield() }
        loop.execute {
            loop.register(readEnd, reader, readable: true, writable: false)
            #expect(loop.inLoop)
        }
        #expect(!loop.inLoop)
        var bytes: [UInt8] = [7, 8, 9]
        _ = write(ends[1], &bytes, 3)
        var reads = readStream.makeAsyncIterator()
        await reads.next()
        #expect(reader.received.withLock { $0 } == [7, 8, 9])

        let (done, finished) = AsyncStream<Void>.makeStream()
        loop.execute {
            loop.schedule(after: .milliseconds(20)) {
                order.withLock { $0.append("later") }
                finished.yield()
            }
            let cancelled = loop.schedule(after: .milliseconds(10)) { order.withLock { $0.append("cancelled") } }
            loop.schedule(after: .milliseconds(1)) { order.withLock { $0.append("sooner") } }
            loop.cancelTimer(cancelled)
            order.withLock { $0.append("task") }
        }
        var doneIterator = done.makeAsyncIterator()
        await doneIterator.next()
        #expect(order.withLock { $0 } == ["task", "sooner", "later"])
        loop.execute { loop.unregister(readEnd) }
        await loop.stop()
        // After stop, tasks are dropped rather than run on a thread that is gone.
        loop.execute { order.withLock { $0.append("after stop") } }
        #expect(!order.withLock { $0 }.contains("after stop"))
    }
}
