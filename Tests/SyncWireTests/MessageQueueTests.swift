import SyncStreams
import Testing

@testable import SyncWire

@Suite("MessageQueue", .timeLimit(.minutes(5)))
struct MessageQueueTests {
    @Test("elements come out in order; the queued cost follows pushes and takes")
    func fifoAndCost() async {
        let queue = MessageQueue<Int>(highWater: 100, lowWater: 10)
        #expect(queue.push(1, cost: 5) == 5)
        #expect(queue.push(2, cost: 7) == 12)
        #expect(await queue.next() == 1)
        #expect(queue.queuedCost == 7)
        #expect(await queue.next() == 2)
        #expect(queue.queuedCost == 0)
    }

    @Test("next() waits for a push; finish() ends the queue after what was queued")
    func waitsThenEnds() async {
        let queue = MessageQueue<String>(highWater: 10, lowWater: 0)
        async let first = queue.next()
        queue.push("a")
        #expect(await first == "a")
        queue.push("b")
        queue.finish()
        #expect(queue.push("refused") == nil)
        #expect(await queue.next() == "b")
        #expect(await queue.next() == nil)
        #expect(await queue.next() == nil)
    }

    @Test("waitUntilDrained() returns once the consumer took the cost down to the low-water mark")
    func drainWaitsForTheConsumer() async {
        let queue = MessageQueue<Int>(highWater: 100, lowWater: 10)
        for value in 0..<5 { queue.push(value, cost: 10) }
        let drained = Locked(false)
        let waiter = Task {
            await queue.waitUntilDrained()
            drained.withLock { $0 = true }
        }
        for expected in 0..<3 {
            #expect(await queue.next() == expected)
            #expect(!drained.withLock { $0 }, "drained early at \(queue.queuedCost)")
        }
        #expect(await queue.next() == 3)  // 10 left: at the mark
        await waiter.value
        #expect(drained.withLock { $0 })
    }

    @Test("onDrained fires once the cost fell from above the high mark to the low mark")
    func onDrainedSignalsAPausedProducer() async {
        let fired = Locked(0)
        let queue = MessageQueue<Int>(highWater: 20, lowWater: 5, onDrained: { fired.withLock { $0 += 1 } })
        for value in 0..<3 { queue.push(value, cost: 10) }  // 30: above the high mark
        _ = await queue.next()  // 20
        _ = await queue.next()  // 10
        #expect(fired.withLock { $0 } == 0)
        _ = await queue.next()  // 0
        #expect(fired.withLock { $0 } == 1)
        queue.push(3, cost: 10)
        _ = await queue.next()  // never above the high mark since: no signal
        #expect(fired.withLock { $0 } == 1)
    }

    @Test("a cancelled consumer gets nil at once")
    func cancellation() async {
        let queue = MessageQueue<Int>(highWater: 1, lowWater: 0)
        let consumer = Task { await queue.next() }
        consumer.cancel()
        #expect(await consumer.value == nil)
        queue.push(1)
        #expect(await queue.next() == 1)  // the element was not lost
    }

    @Test("the stream adapter pulls one element at a time")
    func streamPullsOnDemand() async {
        let queue = MessageQueue<Int>(highWater: 100, lowWater: 0)
        for value in 0..<3 { queue.push(value, cost: 1) }
        var iterator = queue.stream.makeAsyncIterator()
        #expect(await iterator.next() == 0)
        #expect(queue.queuedCost == 2)  // the others wait in the queue, counted
        queue.finish()
        #expect(await iterator.next() == 1)
        #expect(await iterator.next() == 2)
        #expect(await iterator.next() == nil)
    }
}
