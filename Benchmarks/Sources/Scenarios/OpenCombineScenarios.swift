import Dispatch
import Foundation
import OpenCombine
import OpenCombineDispatch

/// P1–P5 for OpenCombine 0.14.
public enum OpenCombineScenarios {
    public static let all: [Scenario] = [
        Scenario(
            id: "P1", title: "pumping: subject → map → filter → sink", library: "OpenCombine", unit: "value",
            count: Sizes.p1Values / 10, run: { pumping($0) }),
        Scenario(
            id: "P2", title: "combineLatest of 2 subjects, alternating sends", library: "OpenCombine", unit: "send",
            count: Sizes.p2Sends / 10, run: { combineLatest($0) }),
        Scenario(
            id: "P3", title: "churn: subscribe to current-value subject + invalidate", library: "OpenCombine",
            unit: "subscription", count: Sizes.p3Subscriptions / 5, run: { churn($0) }),
        Scenario(
            id: "P4", title: "fan-out: 1 subject → 1,000 subscribers", library: "OpenCombine", unit: "delivery",
            count: Sizes.p4Values / 10, opsPerCount: Sizes.p4Subscribers, run: { fanOut($0) }),
        Scenario(
            id: "P5", title: "executor hop: observe(on: serial queue), until all arrived", library: "OpenCombine",
            unit: "value", count: Sizes.p5Values / 4, run: { receiveOn($0) }),
        Scenario(
            id: "P9", title: "two threads sending into one subject, one subscriber, until all arrived",
            library: "OpenCombine", unit: "value", count: Sizes.p9Values / 10, run: { twoSenders($0) }),
    ]

    /// OpenCombine's subject does not serialize concurrent sends; a user must, here with a lock.
    @inline(never)
    public static func twoSenders(_ count: Int) -> Int {
        let subject = SendableBox(PassthroughSubject<Int, Never>())
        let accumulator = Accumulator()
        let lock = NSLock()
        let cancellable = subject.value.sink { accumulator.add($0) }
        ContentionScenarios.onTwoThreads { index in
            for value in stride(from: index, to: count, by: 2) {
                lock.lock()
                subject.value.send(value)
                lock.unlock()
            }
        }
        cancellable.cancel()
        return accumulator.total
    }

    /// Hands an OpenCombine object to the sending threads.
    struct SendableBox<Value>: @unchecked Sendable {
        // @unchecked Sendable: OpenCombine's subjects are thread-safe for `send` (they lock); they are just
        // not annotated. The senders here also hold a lock around every send.
        let value: Value
        init(_ value: Value) { self.value = value }
    }

    @inline(never)
    public static func pumping(_ count: Int) -> Int {
        let subject = PassthroughSubject<Int, Never>()
        let accumulator = Accumulator()
        let cancellable = subject.map(Stage.transform).filter(Stage.isIncluded).sink { accumulator.add($0) }
        for value in 0..<count { subject.send(value) }
        cancellable.cancel()
        return accumulator.total
    }

    enum Side {
        case first(Int)
        case second(Int)
    }

    /// OpenCombine 0.14 has neither `combineLatest` nor `merge` on Linux, so combineLatest is emulated
    /// with operators it has: each input is mapped into an enum `Side`, the two are merged with
    /// `Publishers.Sequence([a, b]).flatMap { $0 }`, `scan` keeps the latest pair of optionals, and
    /// `compactMap` emits the pair once both sides have a value. Same emissions as combineLatest.
    @inline(never)
    public static func combineLatest(_ count: Int) -> Int {
        let first = PassthroughSubject<Int, Never>()
        let second = PassthroughSubject<Int, Never>()
        let accumulator = Accumulator()
        let inputs = [first.map(Side.first).eraseToAnyPublisher(), second.map(Side.second).eraseToAnyPublisher()]
        let cancellable = Publishers.Sequence<[AnyPublisher<Side, Never>], Never>(sequence: inputs)
            .flatMap { $0 }
            .scan((Int?.none, Int?.none)) { latest, side in
                switch side {
                case .first(let value): (value, latest.1)
                case .second(let value): (latest.0, value)
                }
            }
            .compactMap { latest -> (Int, Int)? in
                guard let a = latest.0, let b = latest.1 else { return nil }
                return (a, b)
            }
            .sink { pair in accumulator.add(pair.0 &+ pair.1) }
        for value in 0..<count / 2 {
            first.send(value)
            second.send(value)
        }
        cancellable.cancel()
        return accumulator.total
    }

    @inline(never)
    public static func churn(_ count: Int) -> Int {
        let subject = CurrentValueSubject<Int, Never>(1)
        let accumulator = Accumulator()
        for _ in 0..<count {
            let cancellable = subject.sink { accumulator.add($0) }
            cancellable.cancel()
        }
        return accumulator.total
    }

    @inline(never)
    public static func fanOut(_ values: Int) -> Int {
        let subject = PassthroughSubject<Int, Never>()
        let accumulator = Accumulator()
        let cancellables = (0..<Sizes.p4Subscribers).map { _ in subject.sink { accumulator.add($0) } }
        for value in 0..<values { subject.send(value) }
        for cancellable in cancellables { cancellable.cancel() }
        return accumulator.total
    }

    /// `receive(on:)` with OpenCombineDispatch's `DispatchQueue.OCombine` scheduler.
    @inline(never)
    public static func receiveOn(_ count: Int) -> Int {
        let queue = DispatchQueue(label: "P5.OpenCombine")
        let subject = PassthroughSubject<Int, Never>()
        let accumulator = Accumulator()
        let done = DispatchSemaphore(value: 0)
        let last = count - 1
        let cancellable = subject.receive(on: queue.ocombine).sink { value in
            accumulator.add(value)
            if value == last { done.signal() }
        }
        for value in 0..<count { subject.send(value) }
        done.wait()
        cancellable.cancel()
        return accumulator.count
    }
}
