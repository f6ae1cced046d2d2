import Testing

@testable import SyncEngine

/// `ProgressNotifier` on one thread: the ProgressMode semantics, line by line (numbers refer to the list
/// in the task brief / DESIGN.md §3).
@Suite("ProgressNotifier")
struct ProgressNotifierTests {
    // MARK: 1. Nothing known before the first update

    @Test(
        "1. registration before the first update delivers nothing (no invented (0,0))",
        arguments: [
            ProgressMode.reportIndefinitely, .forCurrentlyOutstandingWork,
        ])
    func nothingBeforeFirstUpdate(mode: ProgressMode) {
        let notifier = ProgressNotifier()
        let recorder = ProgressRecorder()
        let token = recorder.subscribe(to: notifier.progress(for: .download, mode: mode))
        #expect(recorder.events.isEmpty)
        token.invalidate()
    }

    @Test(
        "finish() ends every stream after the reports before it (an unfinished outstanding-work one without 1.0); later updates are ignored, later registrations finish at once",
        arguments: [
            ProgressMode.reportIndefinitely, .forCurrentlyOutstandingWork,
        ])
    func finishEndsStreams(mode: ProgressMode) {
        let notifier = ProgressNotifier()
        let recorder = ProgressRecorder()
        let token = recorder.subscribe(to: notifier.progress(for: .upload, mode: mode))
        notifier.update(.upload, transferred: 0, transferrable: 100)
        notifier.finish()
        notifier.update(.upload, transferred: 50, transferrable: 100)
        #expect(recorder.events == [.value(progress(0, 100, 0)), .finished])
        let later = ProgressRecorder()
        let laterToken = later.subscribe(to: notifier.progress(for: .download, mode: mode))
        #expect(later.events == [.finished])
        #expect(notifier.current(.upload) == progress(0, 100, 0))
        token.invalidate()
        laterToken.invalidate()
    }

    @Test(
        "1. the first update then delivers to a registration made before it",
        arguments: [
            ProgressMode.reportIndefinitely, .forCurrentlyOutstandingWork,
        ])
    func firstUpdateDelivers(mode: ProgressMode) {
        let notifier = ProgressNotifier()
        let recorder = ProgressRecorder()
        let token = recorder.subscribe(to: notifier.progress(for: .download, mode: mode))
        notifier.update(.download, transferred: 0, transferrable: 100)
        #expect(recorder.events == [.value(progress(0, 100, 0))])
        token.invalidate()
    }

    @Test("1. current is nil before the first update of that direction, then the latest report")
    func currentBeforeAndAfter() {
        let notifier = ProgressNotifier()
        #expect(notifier.current(.upload) == nil)
        #expect(notifier.current(.download) == nil)
        notifier.update(.download, transferred: 10, transferrable: 40)
        #expect(notifier.current(.download) == progress(10, 40, 0.25))
        #expect(notifier.current(.upload) == nil)
    }

    @Test("1. an update in the other direction does not make a direction known")
    func otherDirectionUnknown() {
        let notifier = ProgressNotifier()
        let recorder = ProgressRecorder()
        let token = recorder.subscribe(to: notifier.progress(for: .download, mode: .forCurrentlyOutstandingWork))
        notifier.update(.upload, transferred: 0, transferrable: 0)
        #expect(recorder.events.isEmpty)
        token.invalidate()
    }

    // MARK: 2. Registration delivers the current snapshot at once

    @Test(
        "2. registration delivers the current snapshot synchronously inside subscribe",
        arguments: [
            ProgressMode.reportIndefinitely, .forCurrentlyOutstandingWork,
        ])
    func snapshotInsideSubscribe(mode: ProgressMode) {
        let notifier = ProgressNotifier()
        notifier.update(.upload, transferred: 25, transferrable: 100)
        let subscribeReturned = Flag()
        let deliveredInside = Counter()
        let token = notifier.progress(for: .upload, mode: mode).subscribe {
            value in
            if !subscribeReturned.isSet { deliveredInside.increment() }
            #expect(value == progress(25, 100, 0.25))
        }
        subscribeReturned.set()
        #expect(deliveredInside.value == 1)
        token.invalidate()
    }

    @Test("2. registration after several reports delivers only the latest snapshot")
    func onlyLatestSnapshot() {
        let notifier = ProgressNotifier()
        notifier.update(.download, transferred: 0, transferrable: 100)
        notifier.update(.download, transferred: 30, transferrable: 100)
        let recorder = ProgressRecorder()
        let token = recorder.subscribe(to: notifier.progress(for: .download, mode: .reportIndefinitely))
        #expect(recorder.events == [.value(progress(30, 100, 0.3))])
        token.invalidate()
    }

    @Test("registration before and after the first report see the same later values")
    func beforeAndAfterFirstReport() {
        let notifier = ProgressNotifier()
        let early = ProgressRecorder()
        let late = ProgressRecorder()
        let earlyToken = early.subscribe(to: notifier.progress(for: .download, mode: .reportIndefinitely))
        notifier.update(.download, transferred: 0, transferrable: 100)
        let lateToken = late.subscribe(to: notifier.progress(for: .download, mode: .reportIndefinitely))
        notifier.update(.download, transferred: 50, transferrable: 100)
        #expect(early.values == [progress(0, 100, 0), progress(50, 100, 0.5)])
        #expect(late.values == [progress(0, 100, 0), progress(50, 100, 0.5)])
        earlyToken.invalidate()
        lateToken.invalidate()
    }

    // MARK: 3. reportIndefinitely

    @Test("3. reportIndefinitely: the documented example (0,100) (50,100) (100,100) (100,200) (150,200)")
    func indefiniteExample() {
        let notifier = ProgressNotifier()
        let recorder = ProgressRecorder()
        let token = recorder.subscribe(to: notifier.progress(for: .upload, mode: .reportIndefinitely))
        for (t, total) in [(0, 100), (50, 100), (100, 100), (100, 200), (150, 200)] {
            notifier.update(.upload, transferred: t, transferrable: total)
        }
        #expect(
            recorder.events == [
                .value(progress(0, 100, 0)), .value(progress(50, 100, 0.5)), .value(progress(100, 100, 1)),
                .value(progress(100, 200, 0)), .value(progress(150, 200, 0.5)),
            ])
        token.invalidate()
    }

    @Test("3. reportIndefinitely: never finishes on its own and may report complete many times")
    func indefiniteNeverFinishes() {
        let notifier = ProgressNotifier()
        let recorder = ProgressRecorder()
        let token = recorder.subscribe(to: notifier.progress(for: .upload, mode: .reportIndefinitely))
        for (t, total) in [(100, 100), (100, 200), (200, 200), (200, 200), (300, 300)] {
            notifier.update(.upload, transferred: t, transferrable: total)
        }
        #expect(recorder.finishCount == 0)
        #expect(recorder.values.filter(\.isTransferComplete).count == 3)
        #expect(!token.isInvalidated)
        token.invalidate()
    }

    @Test("3. reportIndefinitely: always reports the most up-to-date transferrable")
    func indefiniteLatestTotal() {
        let notifier = ProgressNotifier()
        let recorder = ProgressRecorder()
        let token = recorder.subscribe(to: notifier.progress(for: .upload, mode: .reportIndefinitely))
        for (t, total) in [(0, 100), (10, 500), (20, 50)] {
            notifier.update(.upload, transferred: t, transferrable: total)
        }
        #expect(recorder.values.map(\.transferrableBytes) == [100, 500, 50])
        token.invalidate()
    }

    @Test("3. reportIndefinitely: the estimate restarts from 0 only after it reached 1")
    func indefiniteRestartsOnlyAfterComplete() {
        let notifier = ProgressNotifier()
        let recorder = ProgressRecorder()
        let token = recorder.subscribe(to: notifier.progress(for: .upload, mode: .reportIndefinitely))
        for (t, total) in [(0, 100), (50, 100), (50, 200), (200, 200), (200, 300), (250, 300)] {
            notifier.update(.upload, transferred: t, transferrable: total)
        }
        #expect(recorder.values.map(\.progressEstimate) == [0, 0.5, 0.25, 1, 0, 0.5])
        token.invalidate()
    }

    @Test("3. reportIndefinitely: the base is shared by all subscribers of a direction, also late ones")
    func indefiniteBaseShared() {
        let notifier = ProgressNotifier()
        let early = ProgressRecorder()
        let earlyToken = early.subscribe(to: notifier.progress(for: .upload, mode: .reportIndefinitely))
        notifier.update(.upload, transferred: 100, transferrable: 100)
        notifier.update(.upload, transferred: 100, transferrable: 200)
        let late = ProgressRecorder()
        let lateToken = late.subscribe(to: notifier.progress(for: .upload, mode: .reportIndefinitely))
        notifier.update(.upload, transferred: 150, transferrable: 200)
        #expect(early.values.map(\.progressEstimate) == [1, 0, 0.5])
        #expect(late.values.map(\.progressEstimate) == [0, 0.5])
        #expect(notifier.current(.upload)?.progressEstimate == 0.5)
        earlyToken.invalidate()
        lateToken.invalidate()
    }

    // MARK: 4. forCurrentlyOutstandingWork

    @Test("4. forCurrentlyOutstandingWork: captures transferrable at registration and reports relative to it")
    func outstandingCapturesAtRegistration() {
        let notifier = ProgressNotifier()
        notifier.update(.download, transferred: 20, transferrable: 100)
        let recorder = ProgressRecorder()
        let token = recorder.subscribe(to: notifier.progress(for: .download, mode: .forCurrentlyOutstandingWork))
        notifier.update(.download, transferred: 60, transferrable: 100)
        #expect(recorder.values == [progress(20, 100, 0.2), progress(60, 100, 0.6)])
        token.invalidate()
    }

    @Test("4. forCurrentlyOutstandingWork: captures at the first update when unknown at registration")
    func outstandingCapturesAtFirstUpdate() {
        let notifier = ProgressNotifier()
        let recorder = ProgressRecorder()
        let token = recorder.subscribe(to: notifier.progress(for: .download, mode: .forCurrentlyOutstandingWork))
        notifier.update(.download, transferred: 0, transferrable: 80)
        notifier.update(.download, transferred: 40, transferrable: 500)
        #expect(recorder.values == [progress(0, 80, 0), progress(40, 80, 0.5)])
        token.invalidate()
    }

    @Test("4. forCurrentlyOutstandingWork: captured total only goes down")
    func outstandingCapturedOnlyGoesDown() {
        let notifier = ProgressNotifier()
        notifier.update(.download, transferred: 0, transferrable: 100)
        let recorder = ProgressRecorder()
        let token = recorder.subscribe(to: notifier.progress(for: .download, mode: .forCurrentlyOutstandingWork))
        for (t, total) in [(10, 80), (20, 150), (30, 60)] {
            notifier.update(.download, transferred: t, transferrable: total)
        }
        #expect(recorder.values.map(\.transferrableBytes) == [100, 80, 80, 60])
        token.invalidate()
    }

    @Test("4. forCurrentlyOutstandingWork: a bigger transferrable is ignored")
    func outstandingBiggerIgnored() {
        let notifier = ProgressNotifier()
        notifier.update(.download, transferred: 0, transferrable: 100)
        let recorder = ProgressRecorder()
        let token = recorder.subscribe(to: notifier.progress(for: .download, mode: .forCurrentlyOutstandingWork))
        notifier.update(.download, transferred: 0, transferrable: 1000)
        notifier.update(.download, transferred: 100, transferrable: 1000)
        #expect(recorder.events == [.value(progress(0, 100, 0)), .value(progress(100, 100, 1)), .finished])
        token.invalidate()
    }

    @Test("4. forCurrentlyOutstandingWork: values never go backwards when transferred drops")
    func outstandingNeverBackwards() {
        let notifier = ProgressNotifier()
        notifier.update(.download, transferred: 0, transferrable: 100)
        let recorder = ProgressRecorder()
        let token = recorder.subscribe(to: notifier.progress(for: .download, mode: .forCurrentlyOutstandingWork))
        for (t, total) in [(50, 100), (20, 100), (60, 100)] {
            notifier.update(.download, transferred: t, transferrable: total)
        }
        let values = recorder.values
        #expect(values == [progress(0, 100, 0), progress(50, 100, 0.5), progress(60, 100, 0.6)])
        #expect(zip(values, values.dropFirst()).allSatisfy { $0.transferredBytes <= $1.transferredBytes })
        #expect(zip(values, values.dropFirst()).allSatisfy { $0.progressEstimate <= $1.progressEstimate })
        token.invalidate()
    }

    @Test("4. forCurrentlyOutstandingWork: exactly one final complete event with 1.0, then finished")
    func outstandingFinalEventThenFinish() {
        let notifier = ProgressNotifier()
        notifier.update(.download, transferred: 0, transferrable: 100)
        let recorder = ProgressRecorder()
        let token = recorder.subscribe(to: notifier.progress(for: .download, mode: .forCurrentlyOutstandingWork))
        notifier.update(.download, transferred: 100, transferrable: 100)
        notifier.update(.download, transferred: 100, transferrable: 200)
        notifier.update(.download, transferred: 200, transferrable: 200)
        #expect(recorder.events == [.value(progress(0, 100, 0)), .value(progress(100, 100, 1)), .finished])
        let final = recorder.values.last
        #expect(final?.progressEstimate == 1)
        #expect(final?.isTransferComplete == true)
        token.invalidate()
    }

    @Test(
        "4. forCurrentlyOutstandingWork: nothing outstanding at registration: one complete event during subscribe, then finish"
    )
    func outstandingNothingOutstanding() {
        let notifier = ProgressNotifier()
        notifier.update(.download, transferred: 300, transferrable: 300)
        let recorder = ProgressRecorder()
        let token = recorder.subscribe(to: notifier.progress(for: .download, mode: .forCurrentlyOutstandingWork))
        #expect(recorder.events == [.value(progress(300, 300, 1)), .finished])
        notifier.update(.download, transferred: 300, transferrable: 400)
        notifier.update(.download, transferred: 400, transferrable: 400)
        #expect(recorder.events.count == 2)
        token.invalidate()
    }

    @Test("4. forCurrentlyOutstandingWork: empty upload (0,0) then registration → one complete event then finish")
    func outstandingEmptyUpload() {
        let notifier = ProgressNotifier()
        notifier.update(.upload, transferred: 0, transferrable: 0)
        let recorder = ProgressRecorder()
        let token = recorder.subscribe(to: notifier.progress(for: .upload, mode: .forCurrentlyOutstandingWork))
        #expect(recorder.events == [.value(progress(0, 0, 1)), .finished])
        token.invalidate()
    }

    @Test("4. forCurrentlyOutstandingWork: every upload write before registration counts")
    func outstandingWritesBeforeRegistrationCount() {
        let notifier = ProgressNotifier()
        // Three writes of 40 bytes each, queued before registration; 40 already uploaded.
        notifier.update(.upload, transferred: 0, transferrable: 40)
        notifier.update(.upload, transferred: 0, transferrable: 80)
        notifier.update(.upload, transferred: 40, transferrable: 120)
        let recorder = ProgressRecorder()
        let token = recorder.subscribe(to: notifier.progress(for: .upload, mode: .forCurrentlyOutstandingWork))
        // A write after registration is not waited for.
        notifier.update(.upload, transferred: 40, transferrable: 160)
        notifier.update(.upload, transferred: 120, transferrable: 160)
        #expect(recorder.events == [.value(progress(40, 120, 40.0 / 120.0)), .value(progress(120, 120, 1)), .finished])
        token.invalidate()
    }

    @Test("4. forCurrentlyOutstandingWork: two subscribers on one direction have independent captured totals")
    func outstandingIndependentCaptures() {
        let notifier = ProgressNotifier()
        notifier.update(.download, transferred: 0, transferrable: 100)
        let first = ProgressRecorder()
        let firstToken = first.subscribe(to: notifier.progress(for: .download, mode: .forCurrentlyOutstandingWork))
        notifier.update(.download, transferred: 50, transferrable: 200)
        let second = ProgressRecorder()
        let secondToken = second.subscribe(to: notifier.progress(for: .download, mode: .forCurrentlyOutstandingWork))
        notifier.update(.download, transferred: 100, transferrable: 200)
        notifier.update(.download, transferred: 200, transferrable: 200)
        #expect(
            first.events == [
                .value(progress(0, 100, 0)), .value(progress(50, 100, 0.5)), .value(progress(100, 100, 1)), .finished,
            ])
        #expect(
            second.events == [
                .value(progress(50, 200, 0.25)), .value(progress(100, 200, 0.5)), .value(progress(200, 200, 1)),
                .finished,
            ])
        firstToken.invalidate()
        secondToken.invalidate()
    }

    @Test("4. forCurrentlyOutstandingWork: the ProgressMode doc marble")
    func outstandingDocMarble() {
        let notifier = ProgressNotifier()
        notifier.update(.download, transferred: 0, transferrable: 100)
        let recorder = ProgressRecorder()
        let token = recorder.subscribe(to: notifier.progress(for: .download, mode: .forCurrentlyOutstandingWork))
        for (t, total) in [(50, 300), (40, 300), (80, 90), (90, 400)] {
            notifier.update(.download, transferred: t, transferrable: total)
        }
        #expect(
            recorder.events == [
                .value(progress(0, 100, 0)), .value(progress(50, 100, 0.5)), .value(progress(80, 90, 80.0 / 90.0)),
                .value(progress(90, 90, 1)), .finished,
            ])
        token.invalidate()
    }

    @Test("both directions are independent: counts, bases, subscribers")
    func directionsIndependent() {
        let notifier = ProgressNotifier()
        let upload = ProgressRecorder()
        let download = ProgressRecorder()
        let uploadToken = upload.subscribe(to: notifier.progress(for: .upload, mode: .reportIndefinitely))
        let downloadToken = download.subscribe(to: notifier.progress(for: .download, mode: .reportIndefinitely))
        notifier.update(.upload, transferred: 100, transferrable: 100)
        notifier.update(.download, transferred: 10, transferrable: 100)
        notifier.update(.upload, transferred: 100, transferrable: 200)
        notifier.update(.download, transferred: 20, transferrable: 100)
        #expect(upload.values == [progress(100, 100, 1), progress(100, 200, 0)])
        #expect(download.values == [progress(10, 100, 0.1), progress(20, 100, 0.2)])
        #expect(notifier.current(.upload) == progress(100, 200, 0))
        #expect(notifier.current(.download) == progress(20, 100, 0.2))
        uploadToken.invalidate()
        downloadToken.invalidate()
    }

    @Test("two notifiers are independent")
    func notifiersIndependent() {
        let first = ProgressNotifier()
        let second = ProgressNotifier()
        let recorder = ProgressRecorder()
        let token = recorder.subscribe(to: second.progress(for: .upload, mode: .reportIndefinitely))
        first.update(.upload, transferred: 1, transferrable: 2)
        #expect(recorder.events.isEmpty)
        #expect(second.current(.upload) == nil)
        token.invalidate()
    }

    // MARK: 5. No repeats

    @Test(
        "5. identical consecutive reports are not repeated",
        arguments: [
            ProgressMode.reportIndefinitely, .forCurrentlyOutstandingWork,
        ])
    func noRepeats(mode: ProgressMode) {
        let notifier = ProgressNotifier()
        let recorder = ProgressRecorder()
        let token = recorder.subscribe(to: notifier.progress(for: .upload, mode: mode))
        notifier.update(.upload, transferred: 10, transferrable: 100)
        notifier.update(.upload, transferred: 10, transferrable: 100)
        #expect(recorder.events == [.value(progress(10, 100, 0.1))])
        token.invalidate()
    }

    @Test(
        "5. a registration does not receive its snapshot again at the next identical update",
        arguments: [
            ProgressMode.reportIndefinitely, .forCurrentlyOutstandingWork,
        ])
    func snapshotNotRepeated(mode: ProgressMode) {
        let notifier = ProgressNotifier()
        notifier.update(.upload, transferred: 10, transferrable: 100)
        let recorder = ProgressRecorder()
        let token = recorder.subscribe(to: notifier.progress(for: .upload, mode: mode))
        notifier.update(.upload, transferred: 10, transferrable: 100)
        #expect(recorder.events == [.value(progress(10, 100, 0.1))])
        token.invalidate()
    }

    @Test("5. forCurrentlyOutstandingWork: an update that changes nothing in its view is not reported")
    func outstandingNoRepeatThroughView() {
        let notifier = ProgressNotifier()
        notifier.update(.upload, transferred: 10, transferrable: 100)
        let recorder = ProgressRecorder()
        let token = recorder.subscribe(to: notifier.progress(for: .upload, mode: .forCurrentlyOutstandingWork))
        notifier.update(.upload, transferred: 10, transferrable: 400)  // bigger total: ignored
        notifier.update(.upload, transferred: 5, transferrable: 400)  // drop: keeps the previous
        #expect(recorder.events == [.value(progress(10, 100, 0.1))])
        token.invalidate()
    }

    // MARK: 6. Estimate never NaN, in 0...1

    @Test(
        "6. estimate never NaN and in 0...1: T == 0, t > T, negative, huge numbers near Int.max",
        arguments: [
            ProgressMode.reportIndefinitely, .forCurrentlyOutstandingWork,
        ])
    func estimateAlwaysValid(mode: ProgressMode) {
        let cases: [[(Int, Int)]] = [
            [(0, 0)], [(50, 0)], [(80, 20)], [(-5, -1)], [(-5, 10)], [(0, Int.max), (Int.max - 1, Int.max)],
            [(Int.max - 1, Int.max), (Int.max, Int.max)], [(Int.max, Int.max), (Int.max, Int.max)],
            [(1, Int.max), (Int.max / 2, Int.max), (Int.max - 1, Int.max - 1)],
        ]
        for updates in cases {
            let notifier = ProgressNotifier()
            let recorder = ProgressRecorder()
            let token = recorder.subscribe(to: notifier.progress(for: .download, mode: mode))
            for (t, total) in updates {
                notifier.update(.download, transferred: t, transferrable: total)
            }
            #expect(!recorder.values.isEmpty)
            for value in recorder.values {
                #expect(!value.progressEstimate.isNaN, "\(updates)")
                #expect((0...1).contains(value.progressEstimate), "\(updates)")
                #expect((0...1).contains(value.fractionTransferred), "\(updates)")
                #expect(value.transferredBytes >= 0 && value.transferredBytes <= value.transferrableBytes)
                #expect((value.progressEstimate == 1) == value.isTransferComplete, "\(updates)")
            }
            token.invalidate()
        }
    }

    @Test("6. negative inputs clamp to 0; transferrable below transferred is raised to transferred")
    func inputsSanitized() {
        let notifier = ProgressNotifier()
        notifier.update(.upload, transferred: -10, transferrable: -3)
        #expect(notifier.current(.upload) == progress(0, 0, 1))
        notifier.update(.upload, transferred: 70, transferrable: 30)
        #expect(notifier.current(.upload) == progress(70, 70, 1))
    }

    // MARK: 9. Invalidation

    @Test(
        "9. no callback after invalidate() returns (same thread)",
        arguments: [
            ProgressMode.reportIndefinitely, .forCurrentlyOutstandingWork,
        ])
    func nothingAfterInvalidate(mode: ProgressMode) {
        let notifier = ProgressNotifier()
        notifier.update(.upload, transferred: 0, transferrable: 100)
        let recorder = ProgressRecorder()
        let token = recorder.subscribe(to: notifier.progress(for: .upload, mode: mode))
        token.invalidate()
        notifier.update(.upload, transferred: 50, transferrable: 100)
        notifier.update(.upload, transferred: 100, transferrable: 100)
        #expect(recorder.events == [.value(progress(0, 100, 0))])
        token.invalidate()  // idempotent
        #expect(token.isInvalidated)
    }

    @Test(
        "9. invalidating the token releases the closures",
        arguments: [
            ProgressMode.reportIndefinitely, .forCurrentlyOutstandingWork,
        ])
    func invalidateReleasesClosures(mode: ProgressMode) {
        let notifier = ProgressNotifier()
        notifier.update(.upload, transferred: 0, transferrable: 100)
        var canary: Canary? = Canary()
        weak let weakCanary = canary
        let token = notifier.progress(for: .upload, mode: mode).subscribe(
            onValue: { [canary] _ in canary?.touch() }, onCompletion: { [canary] _ in canary?.touch() })
        canary = nil
        #expect(weakCanary != nil)
        token.invalidate()
        #expect(weakCanary == nil)
    }

    @Test(
        "9. releasing the token without invalidating releases the closures",
        arguments: [
            ProgressMode.reportIndefinitely, .forCurrentlyOutstandingWork,
        ])
    func releaseReleasesClosures(mode: ProgressMode) {
        let notifier = ProgressNotifier()
        notifier.update(.upload, transferred: 0, transferrable: 100)
        var canary: Canary? = Canary()
        weak let weakCanary = canary
        let called = Counter()
        var token: SubscriptionToken? = notifier.progress(for: .upload, mode: mode).subscribe { [canary] _ in
            canary?.touch()
            called.increment()
        }
        canary = nil
        #expect(weakCanary != nil)
        #expect(token != nil)
        token = nil
        #expect(weakCanary == nil)
        notifier.update(.upload, transferred: 50, transferrable: 100)
        #expect(called.value == 1)
    }

    @Test("9. forCurrentlyOutstandingWork: a finished subscription releases its closures while the token is kept")
    func finishedReleasesClosures() {
        let notifier = ProgressNotifier()
        notifier.update(.upload, transferred: 0, transferrable: 100)
        var canary: Canary? = Canary()
        weak let weakCanary = canary
        let token = notifier.progress(for: .upload, mode: .forCurrentlyOutstandingWork).subscribe { [canary] _ in
            canary?.touch()
        }
        canary = nil
        #expect(weakCanary != nil)
        notifier.update(.upload, transferred: 100, transferrable: 100)
        #expect(weakCanary == nil)
        token.invalidate()
    }

    @Test("9. forCurrentlyOutstandingWork: nothing outstanding releases the closures at once")
    func finishedDuringSubscribeReleasesClosures() {
        let notifier = ProgressNotifier()
        notifier.update(.upload, transferred: 0, transferrable: 0)
        var canary: Canary? = Canary()
        weak let weakCanary = canary
        let token = notifier.progress(for: .upload, mode: .forCurrentlyOutstandingWork).subscribe { [canary] _ in
            canary?.touch()
        }
        canary = nil
        #expect(weakCanary == nil)
        token.invalidate()
    }
}
