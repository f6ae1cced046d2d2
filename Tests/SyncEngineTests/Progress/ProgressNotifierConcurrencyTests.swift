import Dispatch
import Foundation
import TestSupport
import Testing

@testable import SyncEngine

/// Semantics line 7 (and line 9 across threads): `update` from several threads at once. These tests are
/// meant to run under ThreadSanitizer too (`swift test --sanitize=thread`).
// 4 minutes: as .offPool tests these wait for a turn (one per core) behind the other stress suites, and
// the limit counts that wait (a full TSan run on 2 cores: up to 111 s from start to end).
@Suite("ProgressNotifier concurrency", .timeLimit(.minutes(6)), .offPool)
struct ProgressNotifierConcurrencyTests {
    private static let threads = 4
    /// 2,000 (each update is delivered to 8 subscribers under a lock); 500 under a sanitizer.
    private static let updatesPerThread = BuildFlavor.iterations(2_000, sanitized: 500)
    /// How long these tests wait for their threads: 20 s, scaled under a sanitizer.
    private static let deadline = defaultWaitSeconds * BuildFlavor.deadlineScale

    @Test("7. concurrent updates: each subscriber sees serialized events, all in the same order, ending at the latest")
    func concurrentUpdatesConsistentOrder() {
        let notifier = ProgressNotifier()
        let total = 1_000_000
        notifier.update(.download, transferred: 0, transferrable: total)
        let recorders = (0..<8).map { _ in ProgressRecorder() }
        let tokens = recorders.map { $0.subscribe(to: notifier.progress(for: .download, mode: .reportIndefinitely)) }
        DispatchQueue.concurrentPerform(iterations: Self.threads) { thread in
            for step in 1...Self.updatesPerThread {
                notifier.update(.download, transferred: step * Self.threads + thread, transferrable: total)
            }
        }
        let reference = recorders[0].values
        #expect(reference.count > 1)
        #expect(reference.last == notifier.current(.download))
        #expect(zip(reference, reference.dropFirst()).allSatisfy { $0 != $1 })
        for recorder in recorders {
            #expect(recorder.overlaps == 0)
            #expect(recorder.finishCount == 0)
            #expect(recorder.values == reference)
        }
        tokens.forEach { $0.invalidate() }
    }

    @Test("7. concurrent updates: no lost final event for forCurrentlyOutstandingWork subscribers")
    func concurrentUpdatesNoLostFinal() {
        let notifier = ProgressNotifier()
        let total = Self.threads * Self.updatesPerThread
        notifier.update(.upload, transferred: 0, transferrable: total)
        let recorders = (0..<8).map { _ in ProgressRecorder() }
        let tokens = recorders.map {
            $0.subscribe(to: notifier.progress(for: .upload, mode: .forCurrentlyOutstandingWork))
        }
        // Thread k sends k+1, k+1+threads, …: the thread with k+1 == threads reaches `total`.
        DispatchQueue.concurrentPerform(iterations: Self.threads) { thread in
            for transferred in stride(from: thread + 1, through: total, by: Self.threads) {
                notifier.update(.upload, transferred: transferred, transferrable: total)
            }
        }
        for recorder in recorders {
            let values = recorder.values
            #expect(recorder.overlaps == 0)
            #expect(recorder.finishCount == 1)
            #expect(recorder.events.last == .finished)
            #expect(values.last == progress(total, total, 1))
            #expect(values.filter(\.isTransferComplete).count == 1)
            #expect(zip(values, values.dropFirst()).allSatisfy { $0.transferredBytes < $1.transferredBytes })
            #expect(zip(values, values.dropFirst()).allSatisfy { $0.progressEstimate < $1.progressEstimate })
        }
        tokens.forEach { $0.invalidate() }
    }

    @Test("7. registrations concurrent with updates: serialized, never backwards, every one finishes once")
    func concurrentRegistrations() async throws {
        let notifier = ProgressNotifier()
        let total = 10_000
        notifier.update(.download, transferred: 0, transferrable: total)
        let recorders = (0..<200).map { _ in ProgressRecorder() }
        let tokens = Locked<[SubscriptionToken]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { lane in
            if lane < 2 {
                for transferred in stride(from: lane, to: total, by: 2) {
                    notifier.update(.download, transferred: transferred, transferrable: total)
                }
            } else {
                for index in stride(from: lane - 2, to: recorders.count, by: 2) {
                    let token = recorders[index].subscribe(
                        to: notifier.progress(for: .download, mode: .forCurrentlyOutstandingWork))
                    tokens.withLock { $0.append(token) }  // one locked step: two lanes append at once
                }
            }
        }
        notifier.update(.download, transferred: total, transferrable: total)
        #expect(tokens.withLock { $0.count } == recorders.count)
        // A drain that the updating lanes kept busy may have handed its last events on to a global queue.
        try await waitUntil("every subscriber's final event") { !recorders.contains { $0.finishCount == 0 } }
        for recorder in recorders {
            let values = recorder.values
            #expect(recorder.overlaps == 0)
            #expect(recorder.finishCount == 1)
            #expect(recorder.events.last == .finished)
            #expect(values.last?.isTransferComplete == true)
            #expect(values.last?.progressEstimate == 1)
            #expect(zip(values, values.dropFirst()).allSatisfy { $0.transferredBytes <= $1.transferredBytes })
            #expect(zip(values, values.dropFirst()).allSatisfy { $0.progressEstimate <= $1.progressEstimate })
            #expect(zip(values, values.dropFirst()).allSatisfy { $0.transferrableBytes >= $1.transferrableBytes })
        }
        for token in tokens.withLock({ $0 }) { token.invalidate() }
    }

    @Test("7. both directions updated concurrently stay independent")
    func concurrentDirections() {
        let notifier = ProgressNotifier()
        let upload = ProgressRecorder()
        let download = ProgressRecorder()
        let uploadToken = upload.subscribe(to: notifier.progress(for: .upload, mode: .reportIndefinitely))
        let downloadToken = download.subscribe(to: notifier.progress(for: .download, mode: .reportIndefinitely))
        DispatchQueue.concurrentPerform(iterations: 2) { lane in
            let direction: ProgressDirection = lane == 0 ? .upload : .download
            for transferred in 0...1_000 {
                notifier.update(direction, transferred: transferred, transferrable: 1_000 * (lane + 1))
            }
        }
        #expect(upload.values.count == 1_001)
        #expect(download.values.count == 1_001)
        #expect(upload.values.last == progress(1_000, 1_000, 1))
        #expect(download.values.last == progress(1_000, 2_000, 0.5))
        #expect(upload.overlaps == 0 && download.overlaps == 0)
        uploadToken.invalidate()
        downloadToken.invalidate()
    }

    @Test(
        "9. no callback starts after invalidate() returns while another thread updates",
        arguments: [
            ProgressMode.reportIndefinitely, .forCurrentlyOutstandingWork,
        ])
    func noCallbackAfterInvalidateAcrossThreads(mode: ProgressMode) {
        let notifier = ProgressNotifier()
        let total = 1_000_000
        notifier.update(.upload, transferred: 0, transferrable: total)
        let received = Counter()
        let invalidated = Flag()
        let late = Counter()
        let receivedEnough = DispatchSemaphore(value: 0)
        let updaterDone = DispatchSemaphore(value: 0)
        let token = notifier.progress(for: .upload, mode: mode).subscribe { _ in
            if received.increment() == 100 { receivedEnough.signal() }
            if invalidated.isSet { late.increment() }
        }
        // A dedicated thread, not the cooperative pool (which these tests may exhaust by blocking): it
        // updates until 1,000 updates after the invalidation.
        let updater = Thread {
            var updatesAfterInvalidation = 0
            for transferred in 1..<total {
                notifier.update(.upload, transferred: transferred, transferrable: total)
                if invalidated.isSet {
                    updatesAfterInvalidation += 1
                    if updatesAfterInvalidation == 1_000 { break }
                }
            }
            updaterDone.signal()
        }
        updater.start()
        // Generous deadlines: a regression fails the test instead of hanging CI.
        let gotEnough = receivedEnough.wait(timeout: .now() + Self.deadline) == .success
        #expect(gotEnough, "the subscriber never received 100 values")
        token.invalidate()
        invalidated.set()
        let countAtInvalidate = received.value
        let updaterFinished = updaterDone.wait(timeout: .now() + Self.deadline) == .success
        #expect(updaterFinished, "the updater did not finish")
        #expect(late.value == 0)
        #expect(received.value == countAtInvalidate)
    }
}
