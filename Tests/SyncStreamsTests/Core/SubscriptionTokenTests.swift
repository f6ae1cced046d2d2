import SyncStreams
import TestSupport
import Testing

@Suite(.offPool) struct SubscriptionTokenTests {
    @Test func initOnInvalidateRunsOnceOnTheFirstInvalidate() {
        let runs = AtomicCounter()
        let token = SubscriptionToken { runs.increment() }
        #expect(runs.value == 0)
        #expect(!token.isInvalidated)
        token.invalidate()
        #expect(runs.value == 1)
        #expect(token.isInvalidated)
        token.invalidate()
        token.invalidate()
        #expect(runs.value == 1, "invalidate is idempotent")
    }

    @Test func releasingTheLastReferenceInvalidates() {
        let runs = AtomicCounter()
        var token: SubscriptionToken? = SubscriptionToken { runs.increment() }
        var extra = token
        token = nil
        #expect(runs.value == 0, "another reference still keeps the subscription")
        #expect(extra?.isInvalidated == false)
        extra = nil
        #expect(runs.value == 1)
    }

    @Test func releasingAnInvalidatedTokenDoesNotRunTheActionAgain() {
        let runs = AtomicCounter()
        var token: SubscriptionToken? = SubscriptionToken { runs.increment() }
        token?.invalidate()
        token = nil
        #expect(runs.value == 1)
    }

    @Test func droppingTheTokenOfASubscriptionEndsIt() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        var token: SubscriptionToken? = recorder.subscribe(to: subject)
        subject.send(1)
        #expect(token?.isInvalidated == false, "the token is live while held")
        token = nil
        subject.send(2)
        #expect(recorder.values == [1])
    }

    @Test func emptyIsAlreadyInvalidated() {
        let token = SubscriptionToken.empty
        #expect(token.isInvalidated)
        token.invalidate()
        #expect(token.isInvalidated)
        #expect(SubscriptionToken.empty != SubscriptionToken.empty, "each empty token is its own object")
    }

    @Test func tokensAreHashableByIdentity() {
        let first = SubscriptionToken {}
        let second = SubscriptionToken {}
        #expect(first != second, "equality is identity: two tokens are never equal")
        var set: Set<SubscriptionToken> = [first, second, first]
        #expect(set.count == 2)
        #expect(set.contains(first))
        set.remove(first)
        #expect(!set.contains(first))
        #expect(set.contains(second))
        // Invalidating does not change a token's hash, so a set holding it still finds it.
        let hashBefore = second.hashValue
        second.invalidate()
        #expect(second.hashValue == hashBefore)
        #expect(set.contains(second))
        first.invalidate()
    }

    @Test func storeInSetKeepsTheSubscriptionUntilTheSetDropsIt() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        var tokens = Set<SubscriptionToken>()
        recorder.subscribe(to: subject).store(in: &tokens)
        let invalidations = AtomicCounter()
        SubscriptionToken { invalidations.increment() }.store(in: &tokens)
        #expect(tokens.count == 2)
        subject.send(1)
        #expect(recorder.values == [1])
        #expect(invalidations.value == 0)
        tokens.removeAll()
        subject.send(2)
        #expect(recorder.values == [1])
        #expect(invalidations.value == 1)
    }

    @Test func storeInArrayKeepsTheSubscriptionUntilTheArrayDropsIt() {
        let subject = PassthroughSubject<Int, Never>()
        let recorder = Recorder<Int, Never>()
        var tokens: [SubscriptionToken] = []
        recorder.subscribe(to: subject).store(in: &tokens)
        let invalidations = AtomicCounter()
        SubscriptionToken { invalidations.increment() }.store(in: &tokens)
        #expect(tokens.count == 2)
        subject.send(1)
        #expect(invalidations.value == 0)
        tokens = []
        subject.send(2)
        #expect(recorder.values == [1])
        #expect(invalidations.value == 1)
    }

    @Test func invalidationReleasesTheOnInvalidateClosure() {
        weak var weakCanary: LifetimeCanary?
        let token: SubscriptionToken
        do {
            let canary = LifetimeCanary()
            weakCanary = canary
            token = SubscriptionToken { canary.touch() }
        }
        #expect(weakCanary != nil)
        token.invalidate()
        #expect(weakCanary == nil)
    }

    @Test func concurrentInvalidatesRunTheActionOnce() {
        let runs = AtomicCounter()
        let tokens = (0..<200).map { _ in SubscriptionToken { runs.increment() } }
        let finished = runOnThreads(4) { _ in
            for token in tokens { token.invalidate() }
        }
        #expect(finished)
        #expect(runs.value == 200)
        #expect(tokens.allSatisfy { $0.isInvalidated })
    }

    @Test func invalidateFromInsideOnInvalidateDoesNotRecurse() {
        let runs = AtomicCounter()
        let slot = TokenSlot()
        slot.token = SubscriptionToken {
            runs.increment()
            slot.invalidate()
        }
        slot.invalidate()
        #expect(runs.value == 1)
    }
}
