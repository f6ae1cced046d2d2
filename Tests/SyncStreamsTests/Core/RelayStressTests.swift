import Dispatch
import SyncStreams
import TestSupport
import Testing

/// Subscribing and invalidating while another thread delivers: the relay then copies its subscriber
/// array instead of changing it in place (the drainer reads it without retaining), so this is where a
/// memory-safety bug would show — under ThreadSanitizer in CI.
@Suite(.offPool) struct RelayStressTests {
    @Test func subscribersComeAndGoWhileAnotherThreadSends() {
        let subject = PassthroughSubject<Int, Never>()
        let steady = Recorder<Int, Never>()
        let steadyToken = steady.subscribe(to: subject)
        let sent = BuildFlavor.iterations(20_000, sanitized: 5_000)
        let rounds = BuildFlavor.iterations(2_000, sanitized: 500)
        let orderViolations = AtomicCounter()

        // Two threads of their own (not tasks: on a 2-thread pool they may not run at the same time).
        let finished = runOnThreads(2) { lane in
            if lane == 0 {
                for value in 0..<sent { subject.send(value) }
            } else {
                for round in 0..<rounds {
                    let last = LockedBox(-1)
                    let token = subject.subscribe { value in
                        let previous = last.value
                        if value <= previous { _ = orderViolations.increment() }
                        last.value = value
                    }
                    if round % 2 == 0 { token.invalidate() }
                    // Odd rounds: the token is released here, which invalidates too.
                }
            }
        }
        #expect(finished)
        #expect(orderViolations.value == 0)
        #expect(steady.values == Array(0..<sent))
        subject.send(completion: .finished)
        #expect(steady.isCompleted)
        #expect(!subject.hasSubscribers)
        steadyToken.invalidate()
    }

    @Test func reentrantSubscribeAndInvalidateDuringFanOut() {
        let subject = PassthroughSubject<Int, Never>()
        let late = Recorder<Int, Never>()
        let holder = TokenHolder()
        let lateTokens = LockedBox<[SubscriptionToken]>([])
        var tokens: [SubscriptionToken] = []
        for index in 0..<8 {
            tokens.append(
                subject.subscribe { value in
                    if index == 3, value == 1 {
                        // Subscribe from inside the fan-out: receives only later values.
                        lateTokens.mutate { $0.append(late.subscribe(to: subject)) }
                    }
                    if index == 5, value == 1 { holder.token?.invalidate() }
                }
            )
        }
        let victim = Recorder<Int, Never>()
        holder.token = victim.subscribe(to: subject)
        subject.send(1)
        subject.send(2)
        #expect(late.values == [2])
        #expect(victim.values == [])  // invalidated by subscriber 5 before its turn for value 1
        tokens.forEach { $0.invalidate() }
        lateTokens.value.forEach { $0.invalidate() }
    }
}
