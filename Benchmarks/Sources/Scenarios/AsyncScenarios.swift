import AsyncAlgorithms
import Dispatch

/// P2 for swift-async-algorithms and P6 for AsyncStream.
public enum AsyncScenarios {
    public static let all: [Scenario] = [
        Scenario(
            id: "P2", title: "combineLatest of 2 subjects, alternating sends", library: "async-algorithms",
            unit: "send", count: Sizes.p2AsyncAlgorithmsSends, run: { await combineLatestChannels($0) }),
        Scenario(
            id: "P6", title: "async bridge: `for await` over values sent from another thread",
            library: "AsyncStream", unit: "value", count: Sizes.p6Values, run: { await asyncStream($0) }),
    ]

    /// `combineLatest` over two `AsyncChannel`s; a producer task sends alternately into them.
    @inline(never)
    public static func combineLatestChannels(_ count: Int) async -> Int {
        let first = AsyncChannel<Int>()
        let second = AsyncChannel<Int>()
        let producer = Task {
            for value in 0..<count / 2 {
                await first.send(value)
                await second.send(value)
            }
            first.finish()
            second.finish()
        }
        var total = 0
        for await (a, b) in combineLatest(first, second) { total &+= a &+ b }
        await producer.value
        return total
    }

    /// An unbounded `AsyncStream` fed by its continuation from another thread.
    @inline(never)
    public static func asyncStream(_ count: Int) async -> Int {
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        DispatchQueue.global().async {
            for value in 0..<count { continuation.yield(value) }
            continuation.finish()
        }
        var total = 0
        for await value in stream { total &+= value }
        return total
    }
}
