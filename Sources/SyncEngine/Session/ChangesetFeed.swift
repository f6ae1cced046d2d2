import Foundation
import SyncStorage
import SyncStreams

/// A session's synced changesets as a stream: a new subscriber first receives every changeset synced so
/// far, in server-version order, then each new one as it is synced — none twice, none skipped.
///
/// Only an index lives in memory (each changeset's server version and where its bytes are in the store
/// file); what is published is only the count, through a `CurrentValueSubject`. Each subscriber reads the
/// changesets between the count it reached and the new one back from the file, one at a time, on its
/// executor — never on the session's actor — so a replay of any length costs one changeset of memory, and
/// a subscriber that reads slowly holds back nobody else (its executor conflates counts while it is busy).
final class ChangesetFeed: Sendable {
    private let entries = Locked<[SyncedEntry]>([])
    private let count = CurrentValueSubject<Int, Never>(0)
    private let file: StoreFile
    private let reportError: @Sendable (SyncError) -> Void

    init(file: StoreFile, reportError: @escaping @Sendable (SyncError) -> Void) {
        self.file = file
        self.reportError = reportError
    }

    /// Appends `new` and publishes them. Called from one serial context (the session's actor).
    func publish(_ new: [SyncedEntry]) {
        guard !new.isEmpty else { return }
        let total = entries.withLock { all -> Int in
            all.append(contentsOf: new)
            return all.count
        }
        count.send(total)
    }

    /// Ends every subscription (after the changesets it has yet to deliver are dropped): the session shut down.
    func finish() { count.send(completion: .finished) }

    /// The changesets, read and delivered on `executor`.
    func stream(on executor: any StreamExecutor) -> AnySyncStream<Changeset, Never> {
        AnySyncStream { [entries, count, file, reportError] onValue, onCompletion in
            let cursor = Cursor()
            let token = count.observe(onAny: executor, buffering: .latest).subscribe(
                onValue: { total in
                    // Deliveries to one subscriber are serialized, so `cursor.delivered` is never touched
                    // concurrently; `isCancelled` is checked between changesets so that invalidating a long
                    // replay does not wait for its end.
                    while cursor.delivered < total, !cursor.isCancelled {
                        let next = cursor.delivered
                        guard let entry = entries.withLock({ $0.indices.contains(next) ? $0[next] : nil }) else {
                            return
                        }
                        let data: [UInt8]
                        do {
                            let record = try Record(decoding: try file.readBlocking(entry.location))
                            guard let bytes = record.changesetData else {
                                throw SyncError.storeCorrupted(path: file.path, offset: entry.location.offset)
                            }
                            data = bytes
                        } catch {
                            cursor.stop()
                            reportError(
                                error as? SyncError
                                    ?? .storeCorrupted(path: file.path, offset: entry.location.offset))
                            return
                        }
                        cursor.delivered = next + 1
                        onValue(Changeset(data: Data(data), serverVersion: entry.serverVersion))
                    }
                },
                onCompletion: onCompletion
            )
            return SubscriptionToken {
                cursor.stop()
                token.invalidate()
            }
        }
    }

    /// How far one subscriber has got, and whether it stopped.
    private final class Cursor: @unchecked Sendable {
        // @unchecked Sendable: `delivered` is only read and written inside one subscription's callbacks,
        // which the stream contract serializes; `stopped` is behind a lock.
        var delivered = 0
        private let stopped = Locked(false)

        var isCancelled: Bool { stopped.withLock { $0 } }
        func stop() { stopped.withLock { $0 = true } }
    }
}
