import SyncStreams
import Testing

@testable import SyncEngine

/// `rate(window:on:)` on the engine's progress streams (`SyncProgress` is a `TransferProgress`), in
/// virtual time.
@Suite("Progress rate")
struct ProgressRateTests {
    @Test("a notifier's download stream measured by rate(window:on:) on a TestExecutor: bytes/s, ETA, stall")
    func downloadRateInVirtualTime() {
        let notifier = ProgressNotifier()
        let executor = TestExecutor()
        let rates = Locked<[TransferRate]>([])
        notifier.update(.download, transferred: 0, transferrable: 1_000)
        let token = notifier.progress(for: .download, mode: .reportIndefinitely)
            .rate(window: .seconds(2), on: executor)
            .subscribe { rate in rates.withLock { $0.append(rate) } }
        executor.advance(by: .zero)
        #expect(rates.withLock { $0 } == [.unknown], "the current snapshot at registration: one sample")
        executor.advance(by: .seconds(1))
        notifier.update(.download, transferred: 200, transferrable: 1_000)
        executor.advance(by: .zero)
        #expect(
            rates.withLock { $0.last } == TransferRate(bytesPerSecond: 200, estimatedTimeRemaining: .seconds(4)))
        executor.advance(by: .seconds(2))
        #expect(rates.withLock { $0.last } == .unknown, "no report for a whole window: stalled")
        #expect(rates.withLock { $0.count } == 3)
        token.invalidate()
        #expect(executor.pendingCount == 0)
    }

    @Test("an upload that completes: its rate over the window and time remaining zero")
    func completeUploadHasZeroTimeRemaining() {
        let notifier = ProgressNotifier()
        let executor = TestExecutor()
        let rates = Locked<[TransferRate]>([])
        notifier.update(.upload, transferred: 0, transferrable: 500)
        let token = notifier.progress(for: .upload, mode: .reportIndefinitely)
            .rate(window: .seconds(5), on: executor)
            .subscribe { rate in rates.withLock { $0.append(rate) } }
        executor.advance(by: .seconds(1))
        notifier.update(.upload, transferred: 500, transferrable: 500)
        executor.advance(by: .zero)
        #expect(rates.withLock { $0.last } == TransferRate(bytesPerSecond: 500, estimatedTimeRemaining: .zero))
        token.invalidate()
    }
}
