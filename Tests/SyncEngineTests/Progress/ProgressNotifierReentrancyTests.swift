import Testing

@testable import SyncEngine

/// Semantics line 8: callbacks that re-enter the notifier (register, update, invalidate) neither deadlock
/// nor lose anything. A registration or an update from inside a callback takes effect right after that
/// callback returns (the subjects' documented behaviour), still before the outer call returns.
@Suite("ProgressNotifier re-entrancy")
struct ProgressNotifierReentrancyTests {
    @Test(
        "8. registering from inside a callback: the new subscription gets its snapshot right after the callback returns"
    )
    func registerInsideCallback() {
        let notifier = ProgressNotifier()
        notifier.update(.upload, transferred: 0, transferrable: 100)
        let log = StepLog()
        let innerToken = Slot<SubscriptionToken>()
        let outerToken = notifier.progress(for: .upload, mode: .reportIndefinitely).subscribe { value in
            log.append("outer \(value.transferredBytes)")
            if value.transferredBytes == 10 {
                innerToken.value = notifier.progress(for: .upload, mode: .reportIndefinitely).subscribe {
                    log.append("inner \($0.transferredBytes)")
                }
                log.append("outer registered")
            }
        }
        notifier.update(.upload, transferred: 10, transferrable: 100)
        #expect(log.steps == ["outer 0", "outer 10", "outer registered", "inner 10"])
        notifier.update(.upload, transferred: 20, transferrable: 100)
        #expect(log.steps.count == 6)
        #expect(Set(log.steps.suffix(2)) == ["outer 20", "inner 20"])
        outerToken.invalidate()
        innerToken.value?.invalidate()
    }

    @Test("8. registering during the snapshot delivery of another registration")
    func registerInsideInitialDelivery() {
        let notifier = ProgressNotifier()
        notifier.update(.download, transferred: 30, transferrable: 100)
        let inner = ProgressRecorder()
        let innerToken = Slot<SubscriptionToken>()
        let log = StepLog()
        let outerToken = notifier.progress(for: .download, mode: .forCurrentlyOutstandingWork).subscribe { value in
            log.append("outer \(value.transferredBytes)")
            if innerToken.value == nil {
                innerToken.value = inner.subscribe(
                    to: notifier.progress(for: .download, mode: .forCurrentlyOutstandingWork))
                log.append("outer registered, inner has \(inner.events.count) events")
            }
        }
        #expect(log.steps == ["outer 30", "outer registered, inner has 0 events"])
        #expect(inner.events == [.value(progress(30, 100, 0.3))])
        notifier.update(.download, transferred: 100, transferrable: 100)
        #expect(inner.events == [.value(progress(30, 100, 0.3)), .value(progress(100, 100, 1)), .finished])
        outerToken.invalidate()
        innerToken.value?.invalidate()
    }

    @Test("8. registering forCurrentlyOutstandingWork with nothing outstanding from inside a callback")
    func registerCompleteInsideCallback() {
        let notifier = ProgressNotifier()
        let inner = ProgressRecorder()
        let innerToken = Slot<SubscriptionToken>()
        let outerToken = notifier.progress(for: .upload, mode: .reportIndefinitely).subscribe { value in
            if value.isTransferComplete, innerToken.value == nil {
                innerToken.value = inner.subscribe(
                    to: notifier.progress(for: .upload, mode: .forCurrentlyOutstandingWork))
            }
        }
        notifier.update(.upload, transferred: 64, transferrable: 64)
        #expect(inner.events == [.value(progress(64, 64, 1)), .finished])
        outerToken.invalidate()
        innerToken.value?.invalidate()
    }

    @Test("8. update from inside a callback: delivered to every subscriber after the callback returns, in one order")
    func updateInsideCallback() {
        let notifier = ProgressNotifier()
        notifier.update(.upload, transferred: 0, transferrable: 100)
        let log = StepLog()
        let seenInside = Slot<SyncProgress>()
        let first = notifier.progress(for: .upload, mode: .reportIndefinitely).subscribe { value in
            log.append("A \(value.transferredBytes)")
            if value.transferredBytes == 10 {
                notifier.update(.upload, transferred: 50, transferrable: 100)
                seenInside.value = notifier.current(.upload)
                log.append("A updated")
            }
        }
        let second = notifier.progress(for: .upload, mode: .reportIndefinitely).subscribe { value in
            log.append("B \(value.transferredBytes)")
        }
        notifier.update(.upload, transferred: 10, transferrable: 100)
        // Everything, including the nested update's value, is delivered before the outer update returns.
        #expect(log.steps == ["A 0", "B 0", "A 10", "A updated", "B 10", "A 50", "B 50"])
        #expect(seenInside.value == progress(50, 100, 0.5))
        first.invalidate()
        second.invalidate()
    }

    @Test(
        "8. forCurrentlyOutstandingWork: an update from inside the snapshot callback completes it before subscribe returns"
    )
    func updateInsideSnapshotCompletes() {
        let notifier = ProgressNotifier()
        notifier.update(.upload, transferred: 0, transferrable: 100)
        let recorder = ProgressRecorder()
        let token = notifier.progress(for: .upload, mode: .forCurrentlyOutstandingWork).subscribe(
            onValue: { value in
                recorder.record(.value(value))
                if value.transferredBytes == 0 { notifier.update(.upload, transferred: 100, transferrable: 100) }
            },
            onCompletion: { _ in recorder.record(.finished) })
        #expect(recorder.events == [.value(progress(0, 100, 0)), .value(progress(100, 100, 1)), .finished])
        notifier.update(.upload, transferred: 100, transferrable: 200)
        #expect(recorder.events.count == 3)
        token.invalidate()
    }

    @Test(
        "8. invalidating its own subscription from inside a callback stops it at once",
        arguments: [
            ProgressMode.reportIndefinitely, .forCurrentlyOutstandingWork,
        ])
    func invalidateSelfInsideCallback(mode: ProgressMode) {
        let notifier = ProgressNotifier()
        notifier.update(.upload, transferred: 0, transferrable: 100)
        let recorder = ProgressRecorder()
        let slot = Slot<SubscriptionToken>()
        let other = ProgressRecorder()
        let otherToken = other.subscribe(to: notifier.progress(for: .upload, mode: mode))
        slot.value = notifier.progress(for: .upload, mode: mode).subscribe(
            onValue: { value in
                recorder.record(.value(value))
                if value.transferredBytes == 10 { slot.value?.invalidate() }
            },
            onCompletion: { _ in recorder.record(.finished) })
        notifier.update(.upload, transferred: 10, transferrable: 100)
        notifier.update(.upload, transferred: 100, transferrable: 100)
        #expect(recorder.events == [.value(progress(0, 100, 0)), .value(progress(10, 100, 0.1))])
        #expect(other.values.count == 3)
        otherToken.invalidate()
    }

    @Test("8. invalidating another subscription from inside a callback: none of its callbacks starts afterwards")
    func invalidateOtherInsideCallback() {
        let notifier = ProgressNotifier()
        notifier.update(.upload, transferred: 0, transferrable: 100)
        let victimToken = Slot<SubscriptionToken>()
        let invalidated = Flag()
        let lateCallbacks = Counter()
        let victimValues = Counter()
        let killer = notifier.progress(for: .upload, mode: .reportIndefinitely).subscribe { value in
            if value.transferredBytes == 10 {
                victimToken.value?.invalidate()
                invalidated.set()
            }
        }
        victimToken.value = notifier.progress(for: .upload, mode: .reportIndefinitely).subscribe { _ in
            victimValues.increment()
            if invalidated.isSet { lateCallbacks.increment() }
        }
        notifier.update(.upload, transferred: 10, transferrable: 100)
        notifier.update(.upload, transferred: 20, transferrable: 100)
        #expect(lateCallbacks.value == 0)
        #expect(victimValues.value == 1)  // the snapshot only: the killer runs first for 10 (attach order)
        killer.invalidate()
    }

    @Test("8. forCurrentlyOutstandingWork: invalidating inside the final value's callback suppresses finished")
    func invalidateInsideFinalValue() {
        let notifier = ProgressNotifier()
        notifier.update(.download, transferred: 0, transferrable: 100)
        let recorder = ProgressRecorder()
        let slot = Slot<SubscriptionToken>()
        slot.value = notifier.progress(for: .download, mode: .forCurrentlyOutstandingWork).subscribe(
            onValue: { value in
                recorder.record(.value(value))
                if value.isTransferComplete { slot.value?.invalidate() }
            },
            onCompletion: { _ in recorder.record(.finished) })
        notifier.update(.download, transferred: 100, transferrable: 100)
        #expect(recorder.events == [.value(progress(0, 100, 0)), .value(progress(100, 100, 1))])
    }

    @Test("8. registering from inside the finished callback of a forCurrentlyOutstandingWork subscription")
    func registerInsideFinished() {
        let notifier = ProgressNotifier()
        notifier.update(.download, transferred: 0, transferrable: 100)
        let next = ProgressRecorder()
        let nextToken = Slot<SubscriptionToken>()
        let token = notifier.progress(for: .download, mode: .forCurrentlyOutstandingWork).subscribe(
            onValue: { _ in },
            onCompletion: { _ in
                nextToken.value = next.subscribe(to: notifier.progress(for: .download, mode: .reportIndefinitely))
            })
        notifier.update(.download, transferred: 100, transferrable: 100)
        #expect(next.values == [progress(100, 100, 1)])
        notifier.update(.download, transferred: 100, transferrable: 150)
        #expect(next.values == [progress(100, 100, 1), progress(100, 150, 0)])
        token.invalidate()
        nextToken.value?.invalidate()
    }
}
