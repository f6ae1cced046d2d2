import Foundation
import SyncServer

/// A `PartitionStore` in memory shared by several servers in one process, as front ends share a
/// database: an append whose first version is not the one after the log's last entry is refused with
/// `PartitionStoreConflict` (nothing written), and every append is announced to every
/// `appendNotifications()` stream — unless the test holds the notifications back to make a server's view
/// stale on purpose.
///
/// It does not refuse a changeset whose (client file, client version) the log already holds: a core
/// that failed to drop a re-upload shows up as a duplicate in `log(of:)`.
final class SharedMemoryStore: PartitionStore, @unchecked Sendable {
    // @unchecked Sendable: every mutable field is used under `lock`.
    private let lock = NSLock()
    private var logs: [String: [StoredChangeset]] = [:]
    private var subscribers: [Int: AsyncStream<AppendNotification>.Continuation] = [:]
    private var nextSubscriber = 0
    private var isHolding = false
    private var held: [AppendNotification] = []
    private var conflictCount = 0
    private var summaryReads = 0
    private var pausedLoads: [CheckedContinuation<Void, Never>] = []
    private var isPausingLoads = false
    private var loadsWaiting = 0
    private var rivalWins = 0
    private var rivalVersion: UInt64 = 0

    /// How many appends were refused with `PartitionStoreConflict`.
    var conflicts: Int { lock.withLock { conflictCount } }
    /// How many `summaries(of:after:)` calls there were.
    var refreshes: Int { lock.withLock { summaryReads } }
    /// How many streams are being consumed.
    var subscriberCount: Int { lock.withLock { subscribers.count } }

    /// The partition's whole log.
    func log(of partition: String) -> [StoredChangeset] { lock.withLock { logs[partition] ?? [] } }

    /// Makes the next `times` appends lose to a rival writer (another front end): just before each, the
    /// store appends a changeset of client file `rivalClientFileID` (bytes `[0xEE]`) under the version
    /// the append wanted, and the append is refused with `PartitionStoreConflict`.
    func letRivalWin(times: Int) { lock.withLock { rivalWins = times } }

    static let rivalClientFileID: UInt64 = 1_000

    /// Keeps later notifications back until `releaseNotifications()`.
    func holdNotifications() { lock.withLock { isHolding = true } }

    /// Sends the notifications held back, in order, and stops holding.
    func releaseNotifications() {
        let (pending, targets) = lock.withLock {
            defer {
                held = []
                isHolding = false
            }
            return (held, Array(subscribers.values))
        }
        for notification in pending { for continuation in targets { continuation.yield(notification) } }
    }

    /// Makes later `summaries(of:)` calls wait, after reading the log, until `resumeLoads()`.
    func pauseLoads() { lock.withLock { isPausingLoads = true } }

    /// How many `summaries(of:)` calls are waiting.
    var waitingLoads: Int { lock.withLock { loadsWaiting } }

    /// Lets the waiting `summaries(of:)` calls return (what they read before waiting) and stops pausing.
    func resumeLoads() {
        let paused = lock.withLock {
            defer {
                pausedLoads = []
                isPausingLoads = false
            }
            return pausedLoads
        }
        for continuation in paused { continuation.resume() }
    }

    func summaries(of partition: String) async -> [StoredChangesetSummary] {
        let (summaries, pauses) = lock.withLock { ((logs[partition] ?? []).map(\.summary), isPausingLoads) }
        if pauses {
            await withCheckedContinuation { continuation in
                lock.withLock {
                    pausedLoads.append(continuation)
                    loadsWaiting += 1
                }
            }
            lock.withLock { loadsWaiting -= 1 }
        }
        return summaries
    }

    func summaries(of partition: String, after version: UInt64) -> [StoredChangesetSummary] {
        lock.withLock {
            summaryReads += 1
            return (logs[partition] ?? []).filter { $0.serverVersion > version }.map(\.summary)
        }
    }

    func read(_ versions: ClosedRange<UInt64>, of partition: String) -> [StoredChangeset] {
        lock.withLock { (logs[partition] ?? []).filter { versions.contains($0.serverVersion) } }
    }

    func append(_ changesets: [StoredChangeset], to partition: String) throws {
        guard let first = changesets.first else { return }
        let (notification, targets): (AppendNotification?, [AsyncStream<AppendNotification>.Continuation]) =
            try lock.withLock {
                var latest = UInt64(logs[partition]?.count ?? 0)
                if rivalWins > 0, first.serverVersion == latest + 1 {
                    rivalWins -= 1
                    rivalVersion += 1
                    logs[partition, default: []].append(
                        StoredChangeset(
                            serverVersion: latest + 1, clientFileID: Self.rivalClientFileID,
                            clientVersion: rivalVersion, data: [0xEE], owner: "rival"))
                    latest += 1
                }
                guard first.serverVersion == latest + 1 else {
                    conflictCount += 1
                    throw PartitionStoreConflict(partition: partition, latestVersion: latest)
                }
                logs[partition, default: []] += changesets
                let notification = AppendNotification(
                    partition: partition, latestVersion: latest + UInt64(changesets.count))
                if isHolding {
                    held.append(notification)
                    return (nil, [])
                }
                return (notification, Array(subscribers.values))
            }
        if let notification { for continuation in targets { continuation.yield(notification) } }
    }

    func appendNotifications() -> AsyncStream<AppendNotification>? {
        let (stream, continuation) = AsyncStream.makeStream(of: AppendNotification.self)
        let id = lock.withLock {
            defer { nextSubscriber += 1 }
            subscribers[nextSubscriber] = continuation
            return nextSubscriber
        }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            _ = self.lock.withLock { self.subscribers.removeValue(forKey: id) }
        }
        return stream
    }
}
