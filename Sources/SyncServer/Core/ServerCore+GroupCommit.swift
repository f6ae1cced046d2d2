import SyncStorage
import SyncWire

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An upload waiting for its partition's next commit (`ServerCore.integrate(_:of:on:)`).
struct QueuedUpload {
    let upload: Upload
    let session: BoundSession
    let connection: ConnectionState
    /// Resumed once: `.done` when another task's commit handled the upload, `.commit` when this upload's
    /// task is to commit the next batch; `nil` for the task committing (it is not waiting).
    var turn: CheckedContinuation<UploadTurn, Never>?
}

/// What a queued upload's task is told (`QueuedUpload.turn`).
enum UploadTurn {
    /// The upload was handled (stored and acknowledged by the pumps, or its session failed).
    case done
    /// Commit the next batch, starting with this upload.
    case commit
}

/// Group commit across sessions: uploads of different sessions to one partition share one
/// `PartitionStore.append` (one fsync for a file store).
///
/// One upload task per partition at a time commits (`Partition.isCommittingUploads`); uploads arriving
/// meanwhile queue (`Partition.queuedUploads`) and their tasks wait. The committer takes the gate, then
/// every queued upload (at most one per client file: a client file's later upload waits for the next
/// batch, so each upload is checked against its client file's log as it stands), handles each as a single
/// upload is handled (unbound sessions skipped, a diverged re-upload fails its session), appends the
/// fresh changesets of all of them in one `append` under consecutive versions, in queue order, and only
/// then, with the entries durable, appends them to the partition and starts the pumps that acknowledge
/// them. An append that fails fails every upload of the batch (`.internalError`, retry later), as a single
/// one's does: nothing is acknowledged that is not durable. The committer then hands the commit to the
/// first upload still queued (it gathered meanwhile, during the fsync), so the next batch is sized by what
/// queued during this one's.
///
/// Each upload's task returns only once its upload was handled, so a connection's next message is
/// handled after its upload as before.
extension ServerCore {
    /// The most uploads one append gathers: 256; 1 (one append per upload, as before group commit) with
    /// `SYNCSTREAMS_GROUP_COMMIT=off` in the environment, to measure one against the other in one binary
    /// (Benchmarks' P8w).
    static let maximumUploadsPerCommit =
        getenv("SYNCSTREAMS_GROUP_COMMIT").map { String(cString: $0) } == "off" ? 1 : 256

    /// Integrates `upload` of `session` (checked already) into its partition, in a batch with other
    /// sessions' uploads waiting meanwhile; returns once it is handled.
    func integrate(_ upload: Upload, of session: BoundSession, on connection: ConnectionState) async {
        let partition = session.partition
        if partition.isCommittingUploads {
            let turn = await withCheckedContinuation { (turn: CheckedContinuation<UploadTurn, Never>) in
                partition.queuedUploads.append(
                    QueuedUpload(upload: upload, session: session, connection: connection, turn: turn))
            }
            guard turn == .commit else { return }
        } else {
            partition.isCommittingUploads = true
            partition.queuedUploads.append(
                QueuedUpload(upload: upload, session: session, connection: connection, turn: nil))
        }
        // This task's upload is first in the queue: commit a batch starting with it.
        await partition.acquire()
        let batch = takeBatch(of: partition)
        await commit(batch, in: partition)
        release(partition)
        for queued in batch { queued.turn?.resume(returning: .done) }
        if partition.queuedUploads.isEmpty {
            partition.isCommittingUploads = false
            noteIfIdle(partition)
        } else {
            partition.queuedUploads[0].turn?.resume(returning: .commit)
            partition.queuedUploads[0].turn = nil
        }
    }

    /// How many uploads wait for `partition`'s next commit (for tests).
    func queuedUploadCount(in partition: String) -> Int {
        partitions[PartitionName(partition)]?.queuedUploads.count ?? 0
    }

    /// Removes the next batch from the partition's queue: its first upload, and each later one of another
    /// client file than those taken, up to `maximumUploadsPerCommit`, in queue order.
    private func takeBatch(of partition: Partition) -> [QueuedUpload] {
        var batch: [QueuedUpload] = []
        var left: [QueuedUpload] = []
        var clientFiles: Set<UInt64> = []
        for queued in partition.queuedUploads {
            if batch.count < Self.maximumUploadsPerCommit, clientFiles.insert(queued.session.clientFileID).inserted {
                batch.append(queued)
            } else {
                left.append(queued)
            }
        }
        partition.queuedUploads = left
        return batch
    }

    /// Stores `batch`'s uploads with one append and reports each outcome to its session. Call while holding
    /// the partition's gate.
    private func commit(_ batch: [QueuedUpload], in partition: Partition) async {
        var accepted: [QueuedUpload] = []
        for queued in batch {
            guard queued.session.isBound else { continue }
            if let diverged = await divergedReupload(queued.upload.changesets, of: queued.session) {
                failSession(
                    queued.session, on: queued.connection, .clientResetRequired, diverged.message,
                    clientReset: diverged.details)
                continue
            }
            accepted.append(queued)
        }
        guard !accepted.isEmpty else { return }
        let pending = accepted.map {
            PendingUpload(changesets: $0.upload.changesets, session: $0.session, owner: $0.connection.owner)
        }
        let outcomes = await storeUploads(pending, in: partition)
        var integrated: [QueuedUpload] = []
        for (queued, outcome) in zip(accepted, outcomes) {
            switch outcome {
            case .stored(let changesets):
                metrics.uploads.add(1, ordering: .relaxed)
                metrics.changesetsUploaded.add(changesets.count, ordering: .relaxed)
                logger.log(
                    .debug, Self.category,
                    "\(partition.name.escapedForLog): integrated versions \(changesets[0].serverVersion)…"
                        + "\(changesets[changesets.count - 1].serverVersion) from client file \(queued.session.clientFileID)"
                )
                integrated.append(queued)
            case .nothingFresh:
                break
            case .skippedVersion(let message, let details):
                failSession(queued.session, on: queued.connection, .clientResetRequired, message, clientReset: details)
            case .failed(let message):
                failSession(
                    queued.session, on: queued.connection, .internalError, message,
                    retryAfterMilliseconds: Self.retryAfterStorageFailure)
            }
        }
        guard !integrated.isEmpty else { return }
        for subscriber in partition.subscribers.values { startPump(subscriber) }
        for queued in integrated { await clientFileSeen(queued.session.clientFileID, in: partition) }
    }
}
