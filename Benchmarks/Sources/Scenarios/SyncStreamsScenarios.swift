import Dispatch
import SyncStreams

/// P1, P3, P4, P6 for SyncStreams (P2 and P5 are in SyncStreamsExecutorScenarios.swift).
public enum SyncStreamsScenarios {
    public static let all: [Scenario] = [
        Scenario(
            id: "P1", title: "pumping: subject → map → filter → sink", library: "SyncStreams", unit: "value",
            count: Sizes.p1Values, run: { pumping($0) }),
        Scenario(
            id: "P3", title: "churn: subscribe to current-value subject + invalidate", library: "SyncStreams",
            unit: "subscription", count: Sizes.p3Subscriptions, run: { churn($0) }),
        Scenario(
            id: "P4", title: "fan-out: 1 subject → 1,000 subscribers", library: "SyncStreams", unit: "delivery",
            count: Sizes.p4Values, opsPerCount: Sizes.p4Subscribers, run: { fanOut($0) }),
        Scenario(
            id: "P6", title: "async bridge: `for await` over values sent from another thread",
            library: "SyncStreams", unit: "value", count: Sizes.p6Values, run: { await asyncBridge($0) }),
    ]

    @inline(never)
    public static func pumping(_ count: Int) -> Int {
        let subject = PassthroughSubject<Int, Never>()
        let accumulator = Accumulator()
        let token = subject.map(Stage.transform).filter(Stage.isIncluded).subscribe { accumulator.add($0) }
        for value in 0..<count { subject.send(value) }
        token.invalidate()
        return accumulator.total
    }

    @inline(never)
    public static func churn(_ count: Int) -> Int {
        let subject = CurrentValueSubject<Int, Never>(1)
        let accumulator = Accumulator()
        for _ in 0..<count {
            let token = subject.subscribe { accumulator.add($0) }
            token.invalidate()
        }
        return accumulator.total
    }

    @inline(never)
    public static func fanOut(_ values: Int) -> Int {
        let subject = PassthroughSubject<Int, Never>()
        let accumulator = Accumulator()
        let tokens = (0..<Sizes.p4Subscribers).map { _ in subject.subscribe { accumulator.add($0) } }
        for value in 0..<values { subject.send(value) }
        for token in tokens { token.invalidate() }
        return accumulator.total
    }

    @inline(never)
    public static func asyncBridge(_ count: Int) async -> Int {
        let subject = PassthroughSubject<Int, Never>()
        let values = subject.values  // subscribes at once and buffers
        DispatchQueue.global().async {
            for value in 0..<count { subject.send(value) }
            subject.send(completion: .finished)
        }
        var total = 0
        for await value in values { total &+= value }
        return total
    }
}
