import Dispatch
import SyncStreams

/// P2 (`combineLatest`) and P5 (`observe(on:)`) for SyncStreams, against the pinned API.
public enum SyncStreamsExecutorScenarios {
    public static let all: [Scenario] = [
        Scenario(
            id: "P2", title: "combineLatest of 2 subjects, alternating sends", library: "SyncStreams", unit: "send",
            count: Sizes.p2Sends, run: { combineLatest($0) }),
        Scenario(
            id: "P5", title: "executor hop: observe(on: serial queue), until all arrived", library: "SyncStreams",
            unit: "value", count: Sizes.p5Values, run: { observeOn($0, latest: false) }),
        Scenario(
            id: "P5 latest", title: "executor hop: observe(on:buffering: .latest), until last arrived",
            library: "SyncStreams", unit: "value", count: Sizes.p5Values, run: { observeOn($0, latest: true) }),
    ]

    /// `count` sends in total, alternating between the two subjects.
    @inline(never)
    public static func combineLatest(_ count: Int) -> Int {
        let first = PassthroughSubject<Int, Never>()
        let second = PassthroughSubject<Int, Never>()
        let accumulator = Accumulator()
        let token = first.combineLatest(second).subscribe { pair in accumulator.add(pair.0 &+ pair.1) }
        for value in 0..<count / 2 {
            first.send(value)
            second.send(value)
        }
        token.invalidate()
        return accumulator.total
    }

    @inline(never)
    public static func observeOn(_ count: Int, latest: Bool) -> Int {
        let queue = DispatchQueue(label: "P5.SyncStreams")
        let subject = PassthroughSubject<Int, Never>()
        let accumulator = Accumulator()
        let done = DispatchSemaphore(value: 0)
        let last = count - 1
        let onValue: @Sendable (Int) -> Void = { value in
            accumulator.add(value)
            if value == last { done.signal() }
        }
        let token =
            latest
            ? subject.observe(on: queue, buffering: .latest).subscribe(onValue)
            : subject.observe(on: queue).subscribe(onValue)
        for value in 0..<count { subject.send(value) }
        done.wait()
        token.invalidate()
        return accumulator.count
    }
}
