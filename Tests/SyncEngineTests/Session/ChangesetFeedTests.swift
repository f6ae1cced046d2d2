import Foundation
import SyncStreams
import TestSupport
import Testing

@testable import SyncEngine

@Suite(.timeLimit(.minutes(5))) struct ChangesetFeedTests {
    /// A download that keeps pace with a changesets subscriber (each changeset is synced while the
    /// previous one is being delivered) must not keep the session's callback executor to itself: one tick
    /// delivers what was synced when it arrived, and the rest comes in later jobs, so the work queued
    /// behind it there — the session's progress and connection states — runs in between.
    @Test func aDownloadKeepingPaceWithItsSubscriberLetsOtherWorkOnTheExecutorRun() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let total = 40
        let (file, _) = try await StoreFile.open(path: directory.url.appendingPathComponent("feed.synclog").path) {
            _, _, _ in
        }
        let locations = try await file.append(
            (1...total).map { Record.downloaded(serverVersion: UInt64($0), data: Array("\($0)".utf8)).payload })
        let entries = zip(1...total, locations).map { SyncedEntry(serverVersion: UInt64($0), location: $1) }
        let feed = ChangesetFeed(file: file, reportError: { Issue.record("unexpected error: \($0)") })
        feed.publish(Array(entries[0..<3]))

        let executor = ManualClockExecutor()
        let received = Locked<[String]>([])
        let token = feed.stream(on: executor).subscribe { changeset in
            let version = Int(changeset.serverVersion)
            received.withLock { $0.append("\(version)") }
            if version == 1 { executor.execute { received.withLock { $0.append("other") } } }
            executor.advance(by: .microseconds(300))  // a subscriber about as slow as the download
            if version + 3 <= total { feed.publish([entries[version + 2]]) }  // the next one is synced meanwhile
        }
        #expect(executor.runAll(limit: 10_000), "the executor never ran out of jobs")
        let order = received.withLock { $0 }
        #expect(order.filter { $0 != "other" } == (1...total).map { "\($0)" }, "changesets lost or reordered")
        let other = try #require(order.firstIndex(of: "other"))
        #expect(other < 10, "the work queued behind the feed waited for \(other) of its \(total) changesets")
        token.invalidate()
    }
}
