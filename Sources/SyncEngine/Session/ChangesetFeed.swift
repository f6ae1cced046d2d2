import Foundation
import SyncStorage
import SyncStreams

/// A session's synced changesets as a stream: a new subscriber first receives every changeset synced so
/// far, in server-version order, then each new one as it is synced — none twice, none skipped.
///
/// Only an index lives in memory (each changeset's server version and where its bytes are in the store
/// file); what is published is only a tick, through a `CurrentValueSubject`, that says "more is synced".
/// Each subscriber reads the changesets from the count it reached to the index's end back from the file,
/// one at a time, on its executor — never on the session's actor — so a replay of any length costs one
/// changeset of memory, and a subscriber that reads slowly holds back nobody else (its executor conflates
/// ticks while it is busy).
///
/// Each subscriber's cursor is the server version it delivered last, in the log's current history.
/// A client reset replaces the store (`replaceStore(with:restart:)`): the index starts again, empty, on
/// the new file. After a reset whose server kept its log (`clientExpired`), each subscriber carries on
/// after the server version it reached — it receives exactly the changesets that follow what it had (the
/// new store downloads the same log again), and the recovered changesets when the server integrates them.
/// After a reset because the server lost history (`historyLost`, `restart`), the server's log is another
/// one whose versions mean other changesets: each subscriber receives the new log from its first version,
/// none of it skipped.
final class ChangesetFeed: Sendable {
    private struct State: Sendable {
        var entries: [SyncedEntry] = []
        var file: StoreFile
        /// Changes with each store replacement: a read that failed on a replaced file is tried again.
        var generation = 0
        /// Changes with each replacement by another history of the log: cursors start again from version 0.
        var history = 0
        /// Deliveries under way (an entry picked, its bytes read, the subscriber's callback not yet returned),
        /// by the generation they picked their entry from.
        var inFlight: [Int: Int] = [:]
        /// `settled()` calls waiting for the deliveries of generations before theirs to end.
        var settleWaiters: [(generation: Int, continuation: CheckedContinuation<Void, Never>)] = []

        /// Whether a delivery picked from a generation before `generation` is still under way.
        func delivering(before generation: Int) -> Bool {
            inFlight.contains { $0.key < generation && $0.value > 0 }
        }

        /// One delivery picked from `generation` ended; returns the waiters that may go on now.
        mutating func ended(_ generation: Int) -> [CheckedContinuation<Void, Never>] {
            inFlight[generation, default: 1] -= 1
            if inFlight[generation] == 0 { inFlight[generation] = nil }
            var ready: [CheckedContinuation<Void, Never>] = []
            var waiting: [(generation: Int, continuation: CheckedContinuation<Void, Never>)] = []
            for waiter in settleWaiters {
                if delivering(before: waiter.generation) {
                    waiting.append(waiter)
                } else {
                    ready.append(waiter.continuation)
                }
            }
            settleWaiters = waiting
            return ready
        }
    }

    private let state: Locked<State>
    private let tick = CurrentValueSubject<Int, Never>(0)
    private let reportError: @Sendable (SyncError) -> Void
    /// Tests: called on the delivering thread after a changeset's bytes were read, before it is delivered.
    let beforeDeliveryForTests = Locked<(@Sendable (UInt64) -> Void)?>(nil)
    /// Tests: called when `settled()` starts waiting for a delivery in flight (outside the lock).
    let settlingForTests = Locked<(@Sendable () -> Void)?>(nil)

    init(file: StoreFile, reportError: @escaping @Sendable (SyncError) -> Void) {
        state = Locked(State(file: file))
        self.reportError = reportError
    }

    /// Appends `new` and publishes them. Called from one serial context (the session's actor).
    func publish(_ new: [SyncedEntry]) {
        guard !new.isEmpty else { return }
        state.withLock { $0.entries.append(contentsOf: new) }
        tick.send(tick.value + 1)
    }

    /// Starts the index again, empty, on `file` (a client reset replaced the store); with `restart` (the
    /// server's log is another history), every subscriber starts again from the new log's first version.
    /// Called from the session's actor.
    func replaceStore(with file: StoreFile, restart: Bool) {
        state.withLock { state in
            state.entries = []
            state.file = file
            state.generation += 1
            if restart { state.history += 1 }
        }
        tick.send(tick.value + 1)
    }

    /// Returns once every delivery that picked its changeset before the last `replaceStore` has reached
    /// its subscriber (the callback returned) or given up. A client reset waits for this between replacing
    /// the store and announcing `didReset`: a subscriber hears of the old history only before `didReset`.
    /// Deliveries picked later read the new store. Called from the session's actor.
    func settled() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                guard state.delivering(before: state.generation) else { return true }
                state.settleWaiters.append((state.generation, continuation))
                return false
            }
            if ready {
                continuation.resume()
            } else if let hook = settlingForTests.withLock({ $0 }) {
                hook()
            }
        }
    }

    /// Ends every subscription (after the changesets it has yet to deliver are dropped): the session shut down.
    func finish() { tick.send(completion: .finished) }

    /// The changesets, read and delivered on `executor`.
    func stream(on executor: any StreamExecutor) -> AnySyncStream<Changeset, Never> {
        AnySyncStream { [state, tick, reportError, beforeDeliveryForTests] onValue, onCompletion in
            let cursor = Cursor()
            let token = tick.observe(onAny: executor, buffering: .latest).subscribe(
                onValue: { _ in
                    // Deliveries to one subscriber are serialized, so `cursor.delivered` is never touched
                    // concurrently; `isCancelled` is checked between changesets so that invalidating a long
                    // replay does not wait for its end. One tick delivers what was synced when it arrived:
                    // what is synced meanwhile comes with the next tick, a new job on the executor, so the
                    // other work there (progress, connection states) is not held back by a download that
                    // keeps pace with this subscriber.
                    let end = state.withLock { $0.entries.last?.serverVersion ?? 0 }
                    while !cursor.isCancelled {
                        let delivered = cursor.delivered
                        let history = cursor.history
                        let found = state.withLock { state -> (SyncedEntry, StoreFile, Int, Int)? in
                            // Another history: everything of the new log is new to this subscriber.
                            let after = state.history == history ? delivered : 0
                            guard after < end, let next = state.entries.firstIndex(after: after) else { return nil }
                            // Counted under the same lock as the pick: `settled()` after a replacement sees
                            // every delivery of the old store that is under way.
                            state.inFlight[state.generation, default: 0] += 1
                            return (state.entries[next], state.file, state.generation, state.history)
                        }
                        guard let (entry, file, generation, current) = found else { return }
                        // Ends this delivery's count however it ends (delivered, failed, read again), and wakes
                        // a reset waiting for it — outside the lock.
                        defer { for waiter in state.withLock({ $0.ended(generation) }) { waiter.resume() } }
                        if current != history {
                            cursor.history = current
                            cursor.delivered = 0
                        }
                        let data: [UInt8]
                        do {
                            let record = try Record(decoding: try file.readBlocking(entry.location))
                            guard let bytes = record.changesetData else {
                                throw SyncError.storeCorrupted(path: file.path, offset: entry.location.offset)
                            }
                            data = bytes
                        } catch {
                            // The store was replaced while reading it: read from the new one.
                            if state.withLock({ $0.generation }) != generation { continue }
                            cursor.stop()
                            reportError(
                                error as? SyncError
                                    ?? .storeCorrupted(path: file.path, offset: entry.location.offset))
                            return
                        }
                        if let hook = beforeDeliveryForTests.withLock({ $0 }) { hook(entry.serverVersion) }
                        cursor.delivered = entry.serverVersion
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
        /// The server version delivered last (0: none), in the history `history`.
        var delivered: UInt64 = 0
        var history = 0
        private let stopped = Locked(false)

        var isCancelled: Bool { stopped.withLock { $0 } }
        func stop() { stopped.withLock { $0 = true } }
    }
}

extension [SyncedEntry] {
    /// The index of the first entry with a server version above `version` (entries are in server-version
    /// order), or `nil` when there is none.
    fileprivate func firstIndex(after version: UInt64) -> Int? {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if self[middle].serverVersion <= version { low = middle + 1 } else { high = middle }
        }
        return low < count ? low : nil
    }
}
