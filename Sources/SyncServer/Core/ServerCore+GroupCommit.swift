import SyncStorage
import SyncWire

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Group commit across sessions, and uploads pipelined per connection.
///
/// Uploads of different sessions to one partition share one `PartitionStore.append` (one fsync for a file
/// store). An upload is queued (`Partition.queuedUploads`) and its connection reads its next message at
/// once: while one commit's fsync runs, the next uploads arrive, are decoded and queue, and the next
/// commit takes them all. One committer task per partition at a time (`Partition.isCommittingUploads`)
/// takes the gate, then the next batch: every queued upload in queue order, at most one entry per client
/// file, where an upload of the same session that continues an entry's client versions is taken into that
/// entry (so a client's consecutive uploads share a commit too), and one of a client file already in the
/// batch otherwise waits for the next batch (so each is checked against its client file's log as it
/// stands). It handles each entry as a single upload is handled (unbound sessions skipped, a diverged
/// re-upload fails its session), appends the fresh changesets of all of them in one `append` under
/// consecutive versions, in queue order, and only then, with the entries durable, appends them to the
/// partition and starts the pumps that acknowledge them. An append that fails fails every upload of the
/// batch (`.internalError`, retry later), as a single one's does: nothing is acknowledged that is not
/// durable. It goes on with what queued meanwhile until the queue is empty, so each batch is sized by what
/// queued during the previous one's fsync.
///
/// A connection's messages keep their order:
/// - its uploads are committed in the order they arrived (per partition: the queue is FIFO, and an upload
///   joins an entry only right behind the upload before it);
/// - any other message — and an upload that is refused — is handled only after the connection's queued
///   uploads were handled (stored and acknowledged by the pumps, or their sessions failed), as it was when
///   every upload was handled before the next message was read; so is the connection's end;
/// - memory stays bounded: an upload's handler returns at once only while the connection's uploads queued
///   before it hold less than `maximumQueuedUploadBytes` bytes and number fewer than
///   `maximumQueuedUploads`; otherwise it waits until enough of them are handled, and the connection
///   reads nothing meanwhile (the transport's flow control then slows the client).
extension ServerCore {
    /// The most uploads one append gathers: 256; 1 (one append per upload, none taken into another, as
    /// before group commit) with `SYNCSTREAMS_GROUP_COMMIT=off` in the environment, to measure one against
    /// the other in one binary (Benchmarks' P8w).
    static let maximumUploadsPerCommit =
        getenv("SYNCSTREAMS_GROUP_COMMIT").map { String(cString: $0) } == "off" ? 1 : 256

    /// The bytes of a connection's queued uploads past which its next upload waits before the connection
    /// reads on: 8 MiB (a client's default upload window).
    static let maximumQueuedUploadBytes = 8 << 20

    /// The number of a connection's queued uploads past which its next upload waits: 64.
    static let maximumQueuedUploads = 64

    /// Queues `upload` of `session` (checked already) for its partition's next commit, starting the
    /// partition's committer if none runs; returns once the connection may read its next message (at once
    /// unless its queued uploads hold the limits).
    func integrate(_ upload: Upload, of session: BoundSession, on connection: ConnectionState) async {
        let partition = session.partition
        let queued = QueuedUpload(upload: upload, session: session, connection: connection)
        partition.queuedUploads.append(queued)
        connection.queuedUploads += 1
        connection.queuedUploadBytes += queued.byteCount
        if !partition.isCommittingUploads {
            partition.isCommittingUploads = true
            Task { await self.commitQueuedUploads(of: partition) }
        }
        while connection.queuedUploadBytes - queued.byteCount >= Self.maximumQueuedUploadBytes
            || connection.queuedUploads - 1 >= Self.maximumQueuedUploads
        {
            await withCheckedContinuation { connection.uploadWaiters.append($0) }
        }
    }

    /// Returns once every upload `connection` queued is handled.
    func waitForQueuedUploads(of connection: ConnectionState) async {
        while connection.queuedUploads > 0 {
            await withCheckedContinuation { connection.uploadWaiters.append($0) }
        }
    }

    /// How many uploads wait for `partition`'s next commit (for tests).
    func queuedUploadCount(in partition: String) -> Int {
        partitions[PartitionName(partition)]?.queuedUploads.count ?? 0
    }

    /// The partition's committer: commits batches until no upload is queued.
    private func commitQueuedUploads(of partition: Partition) async {
        while !partition.queuedUploads.isEmpty {
            await partition.acquire()
            let batch = takeBatch(of: partition)
            await commit(batch, in: partition)
            release(partition)
            uploadsHandled(batch)
        }
        partition.isCommittingUploads = false
        noteIfIdle(partition)
    }

    /// Counts `batch`'s uploads out of their connections' queues and wakes the handlers waiting on them.
    private func uploadsHandled(_ batch: [QueuedUpload]) {
        var connections: [ObjectIdentifier: ConnectionState] = [:]
        for queued in batch {
            queued.connection.queuedUploads -= queued.messageCount
            queued.connection.queuedUploadBytes -= queued.byteCount
            connections[ObjectIdentifier(queued.connection)] = queued.connection
        }
        for connection in connections.values {
            let waiters = connection.uploadWaiters
            connection.uploadWaiters = []
            for waiter in waiters { waiter.resume() }
        }
    }

    /// Removes the next batch from the partition's queue, in queue order: its first upload; each later one
    /// that continues an entry of its session with nothing of its client file left behind, taken into that
    /// entry; and each other one of a client file not in the batch yet, up to `maximumUploadsPerCommit`
    /// entries.
    private func takeBatch(of partition: Partition) -> [QueuedUpload] {
        var batch: [QueuedUpload] = []
        var left: [QueuedUpload] = []
        var clientFiles: Set<UInt64> = []
        var clientFilesLeft: Set<UInt64> = []
        let joins = Self.maximumUploadsPerCommit > 1
        for queued in partition.queuedUploads {
            let clientFile = queued.session.clientFileID
            if joins, !clientFilesLeft.contains(clientFile),
                let entry = batch.lastIndex(where: { $0.session === queued.session }),
                batch[entry].isContinued(by: queued)
            {
                batch[entry].absorb(queued)
            } else if batch.count < Self.maximumUploadsPerCommit, clientFiles.insert(clientFile).inserted {
                batch.append(queued)
            } else {
                left.append(queued)
                clientFilesLeft.insert(clientFile)
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
                metrics.uploads.add(queued.messageCount, ordering: .relaxed)
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
