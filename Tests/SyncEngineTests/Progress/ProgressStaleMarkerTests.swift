import SyncStreams
import Testing

@testable import SyncEngine

/// `markStale` (a session's binding ended): registrations made while stale wait for the next report, and
/// subscribers that saw the stale report do not see it again when the next report is the same.
@Suite struct ProgressStaleMarkerTests {
    @Test("after a stale marker, an identical report reaches only the subscribers that had not delivered it")
    func identicalReportAfterStaleReachesOnlyNewSubscribers() {
        let notifier = ProgressNotifier()
        notifier.update(.upload, transferred: 50, transferrable: 100)
        let early = Locked<[Int]>([])
        let earlyToken = notifier.progress(for: .upload, mode: .reportIndefinitely).subscribe { progress in
            early.withLock { $0.append(progress.transferredBytes) }
        }
        notifier.markStale(.upload)
        let late = Locked<[Int]>([])
        let lateToken = notifier.progress(for: .upload, mode: .reportIndefinitely).subscribe { progress in
            late.withLock { $0.append(progress.transferredBytes) }
        }
        let outstanding = Locked<[Int]>([])
        let outstandingToken = notifier.progress(for: .upload, mode: .forCurrentlyOutstandingWork).subscribe {
            progress in outstanding.withLock { $0.append(progress.transferredBytes) }
        }
        // Nothing is delivered while stale: the late registrations wait for the next report.
        #expect(late.withLock { $0 }.isEmpty)
        #expect(outstanding.withLock { $0 }.isEmpty)

        notifier.update(.upload, transferred: 50, transferrable: 100)
        notifier.update(.upload, transferred: 60, transferrable: 100)

        #expect(early.withLock { $0 } == [50, 60])
        #expect(late.withLock { $0 } == [50, 60])
        #expect(outstanding.withLock { $0 } == [50, 60])
        for token in [earlyToken, lateToken, outstandingToken] { token.invalidate() }
    }

    @Test("a different report after a stale marker reaches every subscriber, and the skip is forgotten")
    func differentReportAfterStaleReachesEveryone() {
        let notifier = ProgressNotifier()
        notifier.update(.upload, transferred: 10, transferrable: 100)
        let seen = Locked<[Int]>([])
        let token = notifier.progress(for: .upload, mode: .reportIndefinitely).subscribe { progress in
            seen.withLock { $0.append(progress.transferredBytes) }
        }
        notifier.markStale(.upload)
        notifier.update(.upload, transferred: 20, transferrable: 100)
        notifier.update(.upload, transferred: 10, transferrable: 100)
        #expect(seen.withLock { $0 } == [10, 20, 10])
        token.invalidate()
    }
}
