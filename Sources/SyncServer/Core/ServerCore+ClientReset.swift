import Foundation
import SyncStorage
import SyncWire

/// Client reset on the server: refusing binds the server cannot serve safely (`clientResetRequired` with
/// `ClientResetDetails`), and, with a maximum offline time, tracking when each client file was last seen
/// and forgetting those offline too long.
///
/// All of it runs on the core's executor while holding the partition's gate, except `clientFileSeenLater`,
/// which takes the gate itself for the durable record it may write.
extension ServerCore {
    /// The partition's client-file registry, read from the store with the log's `summaries` (before the
    /// partition adopts them). Every client file of the log without a record counts as seen now, and that
    /// is recorded, so that restarts do not keep pushing its time forward.
    func loadClientFiles(of name: String, summaries: [StoredChangesetSummary]) async throws -> ClientFileRegistry {
        let registry = ClientFileRegistry()
        guard let tracking = clientFileTracking else { return registry }
        registry.restore(try await tracking.store.clientFileRecords(of: name), recordInterval: tracking.recordInterval)
        var unrecorded: [UInt64] = []
        var noted: Set<UInt64> = []
        for summary in summaries
        where registry.lastSeen[summary.clientFileID] == nil && registry.expired[summary.clientFileID] == nil
            && noted.insert(summary.clientFileID).inserted
        {
            unrecorded.append(summary.clientFileID)
        }
        guard !unrecorded.isEmpty else { return registry }
        let now = tracking.clock()
        try await tracking.store.appendClientFileRecords(unrecorded.map { .seen(clientFileID: $0, at: now) }, to: name)
        for id in unrecorded {
            registry.lastSeen[id] = now
            registry.recordedSeen[id] = now
        }
        return registry
    }

    /// Gives the loaded `partition` its registry and forgets, in it, the client files the registry says
    /// were forgotten.
    func adopt(_ registry: ClientFileRegistry, in partition: Partition) {
        partition.clientFiles = registry
        for id in registry.expired.keys { partition.forget(id) }
    }

    /// Why `bind` must be refused with `clientResetRequired`, if it must: the client holds versions beyond
    /// the log, versions of another history of it (another `historyID`), a checkpoint the log does not hold
    /// (`Bind.checkpoint`: past its end, or other bytes there), or acknowledgements of client versions the log lacks
    /// (`.historyLost`); or its client file was forgotten, now or before, after it was offline too long
    /// (`.clientExpired`). Call while holding the partition's gate, once it is loaded.
    ///
    /// Throws what the store throws when it cannot read the entry at the bind's checkpoint (the bind is then
    /// refused with `internalError`, to be retried: never bound unchecked).
    func clientResetRefusal(
        for bind: Bind, in partition: Partition
    ) async throws -> (
        message: String, details: ClientResetDetails
    )? {
        let id = bind.clientFileID
        if bind.downloadedVersion > partition.latestVersion {
            return (
                "the client holds version \(bind.downloadedVersion) of \(partition.name), but the server's log ends "
                    + "at \(partition.latestVersion): the client must be reset",
                ClientResetDetails(
                    reason: .historyLost, serverVersion: partition.latestVersion,
                    lastIntegratedClientVersion: lastIntegratedClientVersion(of: id, in: partition))
            )
        }
        if let refusal = historyRefusal(for: bind, in: partition) { return refusal }
        if let refusal = try await checkpointRefusal(for: bind, in: partition) { return refusal }
        guard let tracking = clientFileTracking else { return acknowledgementRefusal(for: bind, in: partition) }
        await expireOfflineClientFiles(in: partition, binding: id, tracking: tracking)
        guard let version = partition.clientFiles.expired[id] else {
            return acknowledgementRefusal(for: bind, in: partition)
        }
        // A forgotten client file that saw client versions acknowledged beyond what the log held when it was
        // forgotten: the log was restored from an older copy since (history lost, whatever the checkpoint's
        // one changeset says). Told `clientExpired`, its reset would carry the feed on past versions the log
        // may have given other content (finding 14 of docs/RELIABILITY.md, seed 2318).
        if bind.acknowledgedClientVersion > version {
            return (
                "client file \(id) saw client version \(bind.acknowledgedClientVersion) of \(partition.name) "
                    + "acknowledged, but the server's log held it only up to \(version) when it forgot the client "
                    + "file (the server lost history): the client must be reset",
                ClientResetDetails(
                    reason: .historyLost, serverVersion: partition.latestVersion, lastIntegratedClientVersion: version)
            )
        }
        return (
            "client file \(id) of \(partition.name) was offline longer than \(tracking.maximumText) and "
                + "the server forgot it: the client must be reset",
            ClientResetDetails(
                reason: .clientExpired, serverVersion: partition.latestVersion, lastIntegratedClientVersion: version)
        )
    }

    /// `historyLost` when the client's versions come from another history of the log: the bind names a
    /// history id (`Bind.historyID`) and the log has another one (the store lost or replaced it).
    private func historyRefusal(
        for bind: Bind, in partition: Partition
    ) -> (message: String, details: ClientResetDetails)? {
        guard bind.historyID != 0, partition.historyID != 0, bind.historyID != partition.historyID else { return nil }
        return (
            "the client's copy of \(partition.name) comes from another history of its log (the server's log was lost "
                + "or replaced): the client must be reset",
            ClientResetDetails(
                reason: .historyLost, serverVersion: partition.latestVersion,
                lastIntegratedClientVersion: lastIntegratedClientVersion(of: bind.clientFileID, in: partition))
        )
    }

    /// `historyLost` when the log does not hold the client's checkpoint (`Bind.checkpoint`: the changeset it
    /// holds at its downloaded version, or the one its changesets feed reached before a `clientExpired`
    /// reset replaced its store): the log ends before it, or has other bytes there (the CRC-32 differs) —
    /// the log was restored from an older copy of the same history (same history id) and may have given
    /// that version other content since. Nothing else shows it when the client holds no acknowledged
    /// changeset of its own beyond the restore point. Checked before the expiry of the client file, so that
    /// a client whose history regressed is always told `historyLost` (its changesets feed starts again from
    /// the new log), never `clientExpired`. A bind that names no checkpoint (protocol version 5 or older, or
    /// nothing held) is not checked.
    private func checkpointRefusal(
        for bind: Bind, in partition: Partition
    ) async throws -> (message: String, details: ClientResetDetails)? {
        guard let checkpoint = bind.checkpoint, checkpoint.serverVersion >= 1 else { return nil }
        let version = checkpoint.serverVersion
        let details = ClientResetDetails(
            reason: .historyLost, serverVersion: partition.latestVersion,
            lastIntegratedClientVersion: lastIntegratedClientVersion(of: bind.clientFileID, in: partition))
        guard version <= partition.latestVersion else {
            return (
                "the client held version \(version) of \(partition.name), but the server's log ends at "
                    + "\(partition.latestVersion): the client must be reset", details
            )
        }
        if checkpoint.coversPrefix {
            if try await prefixDigest(at: version, in: partition) == checkpoint.digest { return nil }
            if try await uploaderViewMatches(checkpoint, clientFileID: bind.clientFileID, in: partition) { return nil }
            return (
                "the client holds other bytes at a version up to \(version) of \(partition.name) than the server's log "
                    + "(the server was restored from an older copy of its log): the client must be reset", details
            )
        }
        let data = try await changesetData(at: version, of: partition)
        guard CRC32.checksum(data) != checkpoint.digest else { return nil }
        // A duplicate entry reaches other clients empty (its uploader, and a reset continuing its store, hold
        // its bytes).
        if partition.entry(version).duplicateOf != nil, CRC32.checksum([]) == checkpoint.digest { return nil }
        return (
            "the client holds other bytes at version \(version) of \(partition.name) than the server's log (the server "
                + "was restored from an older copy of its log): the client must be reset", details
        )
    }

    /// How many versions `prefixDigest` reads from the store at a time.
    static let prefixDigestBatch: UInt64 = 256

    /// The prefix digest D(`version`) of the log (1 ≤ `version` ≤ `latestVersion`) as a client that uploaded
    /// none of its duplicate entries holds it, filling `partition.prefixDigests` up to `version` first: the
    /// versions missing are read from the store in batches (counted as a reader, as a pump's reads are).
    private func prefixDigest(at version: UInt64, in partition: Partition) async throws -> UInt32 {
        while UInt64(partition.prefixDigests.count) < version {
            let first = UInt64(partition.prefixDigests.count) + 1
            let last = min(version, first + Self.prefixDigestBatch - 1)
            let read = try await readEntries(first...last, of: partition)
            var previous = partition.prefixDigests.last ?? 0
            for entry in read {
                previous = CRC32.prefixDigest(after: previous, checksum: CRC32.checksum(entry.deliveredData))
                partition.prefixDigests.append(previous)
            }
        }
        return partition.prefixDigests[Int(version - 1)]
    }

    /// Whether `checkpoint` (a prefix digest) matches the log as the uploader of some of its duplicate entries
    /// holds it, with their bytes where other clients hold an empty changeset (`StoredChangeset.duplicateOf`):
    /// with the bytes of the duplicates `clientFileID` uploaded, or of every duplicate (a store a
    /// `clientExpired` reset made carries the checkpoint of the client file it replaced, which uploaded them).
    /// Reads the log from the first duplicate up to the checkpoint; `false` at once when there is none.
    private func uploaderViewMatches(
        _ checkpoint: LogCheckpoint, clientFileID: UInt64, in partition: Partition
    ) async throws -> Bool {
        let version = checkpoint.serverVersion
        guard let first = (1...version).first(where: { partition.entry($0).duplicateOf != nil }) else { return false }
        var own: UInt32 = first == 1 ? 0 : partition.prefixDigests[Int(first - 2)]
        var every = own
        var start = first
        while start <= version {
            let last = min(version, start + Self.prefixDigestBatch - 1)
            for entry in try await readEntries(start...last, of: partition) {
                let delivered = CRC32.checksum(entry.deliveredData)
                let held = CRC32.checksum(entry.data)
                own = CRC32.prefixDigest(after: own, checksum: entry.clientFileID == clientFileID ? held : delivered)
                every = CRC32.prefixDigest(after: every, checksum: held)
            }
            start = last + 1
        }
        return own == checkpoint.digest || every == checkpoint.digest
    }

    /// The bytes of the log's entry at `version`: from the partition's cache of recent changesets, or read
    /// from the store (`readEntries`).
    func changesetData(at version: UInt64, of partition: Partition) async throws -> [UInt8] {
        if let cached = partition.cachedData(of: version) { return cached }
        return try await readEntries(version...version, of: partition)[0].data
    }

    /// The entries `versions` of the partition's log, read from the store (counted as a reader), in order.
    func readEntries(_ versions: ClosedRange<UInt64>, of partition: Partition) async throws -> [StoredChangeset] {
        partition.readers += 1
        defer {
            partition.readers -= 1
            noteIfIdle(partition)
        }
        let read = try await store.read(versions, of: partition.name)
        for (offset, entry) in read.enumerated() where entry.serverVersion != versions.lowerBound + UInt64(offset) {
            throw PartitionLogError(
                partition: partition.name, expectedServerVersion: versions.lowerBound + UInt64(offset),
                foundServerVersion: entry.serverVersion)
        }
        guard read.count == versions.count else {
            throw PartitionLogError(
                partition: partition.name, expectedServerVersion: versions.lowerBound + UInt64(read.count),
                foundServerVersion: 0)
        }
        return read
    }

    /// `historyLost` when the client saw client versions acknowledged that the log does not hold (a store
    /// restored from an older copy of the same history): without the reset it would never upload them again.
    private func acknowledgementRefusal(
        for bind: Bind, in partition: Partition
    ) -> (message: String, details: ClientResetDetails)? {
        let integrated = partition.lastClientVersion[bind.clientFileID] ?? 0
        guard bind.acknowledgedClientVersion > integrated else { return nil }
        return (
            "client file \(bind.clientFileID) saw client version \(bind.acknowledgedClientVersion) of \(partition.name) "
                + "acknowledged, but the server's log holds it only up to \(integrated) (the server lost history): "
                + "the client must be reset",
            ClientResetDetails(
                reason: .historyLost, serverVersion: partition.latestVersion, lastIntegratedClientVersion: integrated)
        )
    }

    /// The highest client version of `id` the log holds, forgotten or not.
    private func lastIntegratedClientVersion(of id: UInt64, in partition: Partition) -> UInt64 {
        partition.clientFiles.expired[id] ?? partition.lastClientVersion[id] ?? 0
    }

    /// Forgets the client files unseen for longer than the maximum: `binding` always, and every client file
    /// of the partition at most once per record interval. A bound client file counts as seen now. What is
    /// forgotten is recorded durably first; if that fails, nothing is forgotten this time.
    private func expireOfflineClientFiles(
        in partition: Partition, binding: UInt64, tracking: ClientFileTracking
    ) async {
        let registry = partition.clientFiles
        let now = tracking.clock()
        let sweepsAll = registry.lastSweep.map { now.timeIntervalSince($0) >= tracking.recordInterval } ?? true
        let bound = Set(partition.subscribers.values.map(\.clientFileID))
        let candidates = sweepsAll ? Array(registry.lastSeen.keys) : [binding]
        var stale: [(id: UInt64, version: UInt64, lastSeen: Date)] = []
        for id in candidates {
            guard let seen = registry.lastSeen[id] else { continue }
            if bound.contains(id) {
                registry.lastSeen[id] = now
            } else if now.timeIntervalSince(seen) > tracking.maximumOffline {
                stale.append((id, lastIntegratedClientVersion(of: id, in: partition), seen))
            }
        }
        if sweepsAll { registry.lastSweep = now }
        guard !stale.isEmpty else { return }
        stale.sort { $0.id < $1.id }
        do {
            try await tracking.store.appendClientFileRecords(
                stale.map { .expired(clientFileID: $0.id, lastIntegratedClientVersion: $0.version, at: now) },
                to: partition.name)
        } catch {
            logger.log(.warn, Self.category, "\(partition.name): could not record forgotten client files: \(error)")
            return
        }
        for file in stale {
            registry.expired[file.id] = file.version
            registry.lastSeen[file.id] = nil
            registry.recordedSeen[file.id] = nil
            partition.forget(file.id)
            logger.log(
                .info, Self.category,
                "\(partition.name): forgot client file \(file.id) (last seen \(file.lastSeen), client version "
                    + "\(file.version) integrated)")
        }
    }

    /// Client file `id` was seen now (bound, or uploaded): remembered, and recorded durably when its record
    /// lags by the record interval or more. Call while holding the partition's gate. A failed record is
    /// logged and tried again next time.
    func clientFileSeen(_ id: UInt64, in partition: Partition) async {
        guard let tracking = clientFileTracking, let record = noteSeen(id, in: partition, tracking: tracking)
        else { return }
        await write(record, for: partition, tracking: tracking)
    }

    /// The same when the gate is not held (a session ended): the record, if due, is written by a task
    /// that takes the gate — tracked, so that `finishSeenRecords()` (from `SyncServer.stop()`) waits for it.
    func clientFileSeenLater(_ id: UInt64, in partition: Partition) {
        guard let tracking = clientFileTracking, let record = noteSeen(id, in: partition, tracking: tracking)
        else { return }
        let number = nextSeenRecordWrite
        nextSeenRecordWrite += 1
        seenRecordWrites[number] = Task {
            await partition.acquire()
            await self.write(record, for: partition, tracking: tracking)
            self.release(partition)
            self.seenRecordWrites[number] = nil
        }
    }

    /// Waits until every "seen" record of an ended session is written (or failed and logged).
    func finishSeenRecords() async {
        while let (_, write) = seenRecordWrites.first { await write.value }
    }

    private func noteSeen(_ id: UInt64, in partition: Partition, tracking: ClientFileTracking) -> ClientFileRecord? {
        let registry = partition.clientFiles
        guard registry.expired[id] == nil else { return nil }
        let now = tracking.clock()
        registry.lastSeen[id] = now
        if let recorded = registry.recordedSeen[id], now.timeIntervalSince(recorded) < tracking.recordInterval {
            return nil
        }
        registry.recordedSeen[id] = now
        return .seen(clientFileID: id, at: now)
    }

    private func write(_ record: ClientFileRecord, for partition: Partition, tracking: ClientFileTracking) async {
        do {
            try await tracking.store.appendClientFileRecords([record], to: partition.name)
        } catch {
            partition.clientFiles.recordedSeen[record.clientFileID] = nil
            logger.log(
                .warn, Self.category,
                "\(partition.name): could not record that client file \(record.clientFileID) was seen: \(error)")
        }
    }
}
