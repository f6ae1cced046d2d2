import Foundation
import SyncStreams
import TestSupport
import Testing

@testable import SyncWire

@Suite("SyncLogger", .timeLimit(.minutes(5)))
struct SyncLoggerTests {
    @Test("events logged from two threads at once reach the sink and the events stream in one and the same order")
    func oneOrderForSinkAndStream() async throws {
        let sunk = Locked<[String]>([])
        let logger = SyncLogger(level: .trace, sink: { event in sunk.withLock { $0.append(event.message) } })
        let streamed = Locked<[String]>([])
        let token = logger.events.subscribe { event in streamed.withLock { $0.append(event.message) } }
        let perThread = 20_000
        // Two threads of their own (not the cooperative pool), each logging as fast as it can.
        let finished = DispatchGroup()
        for thread in 0..<2 {
            finished.enter()
            Thread {
                for index in 0..<perThread { logger.log(.debug, "test", "\(thread)-\(index)") }
                finished.leave()
            }.start()
        }
        try await offPool("both threads to finish logging") { finished.wait() }
        // A delivery that other threads' events kept busy hands the rest to a job: wait for all of them.
        try await eventually("the sink and the stream to hold all \(2 * perThread) events") {
            sunk.withLock { $0.count } == 2 * perThread && streamed.withLock { $0.count } == 2 * perThread
        }
        token.invalidate()
        let sinkOrder = sunk.withLock { $0 }
        #expect(sinkOrder.count == 2 * perThread)
        #expect(streamed.withLock { $0 } == sinkOrder)
    }
}
