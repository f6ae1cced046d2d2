import SyncStreams
import TestSupport
import Testing

@Suite(.offPool) struct CurrentValueSubjectTests {
    @Test func subscribingDeliversTheCurrentValueAtOnce() {
        let subject = CurrentValueSubject<Int, Never>(0)
        subject.send(1)
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject)
        #expect(recorder.events == [.value(1)], "the current value is delivered during subscribe")
        subject.send(2)
        subject.send(2)
        #expect(recorder.values == [1, 2, 2], "repeated values are delivered again")
        token.invalidate()
    }

    @Test func valueGetterAndSetter() {
        let subject = CurrentValueSubject<String, Never>("a")
        #expect(subject.value == "a")
        let recorder = Recorder<String, Never>()
        let token = recorder.subscribe(to: subject)
        subject.value = "b"
        #expect(subject.value == "b")
        subject.send("c")
        #expect(subject.value == "c")
        #expect(recorder.values == ["a", "b", "c"])
        token.invalidate()
    }

    @Test func eachSubscriberStartsFromTheValueCurrentWhenItSubscribes() {
        let subject = CurrentValueSubject<Int, Never>(0)
        let first = Recorder<Int, Never>()
        let second = Recorder<Int, Never>()
        let firstToken = first.subscribe(to: subject)
        subject.send(1)
        let secondToken = second.subscribe(to: subject)
        subject.send(2)
        #expect(first.values == [0, 1, 2])
        #expect(second.values == [1, 2])
        firstToken.invalidate()
        secondToken.invalidate()
    }

    @Test func afterCompletionSendsAreIgnoredAndANewSubscriberReceivesOnlyTheCompletion() {
        let subject = CurrentValueSubject<Int, StreamTestError>(1)
        let early = Recorder<Int, StreamTestError>()
        let earlyToken = early.subscribe(to: subject)
        subject.send(2)
        subject.send(completion: .failure(.boom))
        subject.send(3)
        subject.value = 4
        subject.send(completion: .finished)
        #expect(subject.value == 2, "value stays the last value sent before the completion")
        #expect(early.events == [.value(1), .value(2), .failure(.boom)])
        let late = Recorder<Int, StreamTestError>()
        let lateToken = late.subscribe(to: subject)
        #expect(late.events == [.failure(.boom)])
        earlyToken.invalidate()
        lateToken.invalidate()
    }

    @Test func finishedSubjectGivesLateSubscribersOnlyFinished() {
        let subject = CurrentValueSubject<Int, Never>(7)
        subject.send(completion: .finished)
        let recorder = Recorder<Int, Never>()
        let token = recorder.subscribe(to: subject)
        #expect(recorder.events == [.finished])
        #expect(subject.value == 7)
        token.invalidate()
    }

    @Test func invalidateStopsValuesAndReleasesTheClosures() {
        let subject = CurrentValueSubject<Int, Never>(0)
        let recorder = Recorder<Int, Never>()
        let probe = LifetimeProbe()
        var token: SubscriptionToken? = probe.capture { canary in
            subject.subscribe { value in
                canary.touch()
                recorder.receive(value)
            }
        }
        subject.send(1)
        token?.invalidate()
        #expect(!probe.isAlive)
        subject.send(2)
        #expect(recorder.values == [0, 1])
        token = nil
    }

    @Test func reentrantSubscribeReceivesTheCurrentValueBeforeLaterValues() {
        let subject = CurrentValueSubject<Int, Never>(0)
        let inner = Recorder<Int, Never>()
        let innerToken = TokenSlot()
        let outer = Recorder<Int, Never>()
        let outerToken = subject.subscribe { value in
            outer.receive(value)
            if value == 1 {
                innerToken.token = inner.subscribe(to: subject)
                subject.send(2)
            }
        }
        subject.send(1)
        subject.send(3)
        #expect(outer.values == [0, 1, 2, 3])
        #expect(inner.values == [1, 2, 3])
        outerToken.invalidate()
        innerToken.invalidate()
    }

    @Test func reentrantSendThenSubscribeSeesTheNewCurrentValueOnce() {
        let subject = CurrentValueSubject<Int, Never>(0)
        let inner = Recorder<Int, Never>()
        let innerToken = TokenSlot()
        let outerToken = subject.subscribe { value in
            if value == 1 {
                subject.send(2)
                innerToken.token = inner.subscribe(to: subject)
            }
        }
        subject.send(1)
        #expect(inner.values == [2])
        #expect(subject.value == 2)
        outerToken.invalidate()
        innerToken.invalidate()
    }

    /// A zero-sized `Output` (here `Void`) must be as thread-safe as any other, including under
    /// ThreadSanitizer (run with `--sanitize=thread`: no report may appear).
    @Test func concurrentSendsAndReadsOfAVoidSubjectAreSerialized() {
        let subject = CurrentValueSubject<Void, Never>(())
        let count = AtomicCounter()
        let overlap = OverlapDetector()
        let token = subject.subscribe {
            overlap.enter()
            count.increment()
            overlap.exit()
        }
        let finished = runOnThreads(3) { _ in
            for _ in 0..<2_000 {
                subject.send(())
                subject.value = ()
                _ = subject.value
            }
        }
        #expect(finished)
        // A drain that other threads keep busy hands the rest to a global queue: wait for it.
        #expect(eventually { count.value == 1 + 3 * 2 * 2_000 }, "\(count.value) delivered")
        #expect(overlap.overlapCount == 0)
        token.invalidate()
    }
}
