import Foundation
import SyncStorage
import SyncStreams
import SyncWire

/// Client reset: the server refused the session's client file (`clientResetRequired`); in an automatic
/// mode the session replaces its local store by one that downloads the server's log afresh.
///
/// The replacement is crash-safe: the new store (a header with a new client file id and, when
/// recovering, the local changesets the server does not hold, as new client versions 1, 2, …) is written
/// and fsynced at `.reset-<store file name>` beside the store, locked, then renamed over the store and the
/// directory fsynced. A crash before the rename leaves the old store (the next open removes the leftover
/// and the server asks for the reset again); after it, the new one. Exactly once: the server's answer
/// says which client versions it holds (`ClientResetDetails.lastIntegratedClientVersion`); only those
/// above are carried over, and the new client file makes them new changesets on the server.
extension SessionEngine {
    /// The server asked for a client reset (the connection forgot the registration). In `.manual` mode,
    /// or without the server's details (a server older than protocol version 2), the session fails with
    /// `error`; otherwise the reset starts, without keeping the connection's actor waiting, as the session's
    /// `resetTask`: `shutDown()` waits for it, so a reset never outlives its session (nothing is renamed
    /// over the store and nothing reaches the handler once `app.close()`, `logOut()` or `remove()` returned).
    func clientResetRequired(_ error: SyncError, details: ClientResetDetails?) {
        if isResetting {
            // A second refusal of the old client file (e.g. the answer to an upload sent before a diverged
            // acknowledgement started the reset): the reset in progress replaces that client file anyway.
            logger.log(.info, LogCategory.session, "\(partition): client reset already in progress: \(error)")
            return
        }
        guard clientReset.mode != .manual, let details, !isClosed else {
            return failedFatally(error)
        }
        registration = nil
        dropBinding()
        isResetting = true
        statusTracker.update { $0.isResetting = true }
        connectionStateChanged(.disconnected)
        logger.log(.warn, LogCategory.session, "\(partition): client reset (\(details.reason)): \(error)")
        resetTask = Task { await self.reset(details) }
    }

    /// The server acknowledged, under one of this store's client versions, a changeset with other bytes
    /// (`Download.acknowledgedDigests`): the store was copied or restored from a backup and its write reused
    /// a version the original had used. Taking it as acknowledged would lose the write silently; instead
    /// the session unbinds and resets (`historyLost`), recovering its changesets from that version on.
    func divergedAcknowledgement(_ diverged: (serverVersion: UInt64, clientVersion: UInt64)) {
        let message =
            "the server acknowledged client version \(diverged.clientVersion) of client file \(store.clientFileID) "
            + "with other bytes than this store's (the store was copied or restored from a backup)"
        if let id = registration {
            registration = nil
            Task { [connection] in await connection.unregister(id) }
        }
        if diverged.clientVersion < (divergedClientVersion ?? .max) {
            divergedClientVersion = diverged.clientVersion
            // Durable before the reset's new store is written (the reset flushes what is queued first), so
            // that a relaunch after a failed reset still bounds the next one.
            persistDiverged(clientVersion: diverged.clientVersion)
        }
        clientResetRequired(
            .clientResetRequired(message),
            details: ClientResetDetails(
                reason: .historyLost, serverVersion: diverged.serverVersion,
                lastIntegratedClientVersion: diverged.clientVersion - 1))
    }

    /// The path of a reset's new store while it is being written, beside the store at `path`.
    static func resetPath(for path: String) -> String {
        let slash = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        return String(path[..<slash]) + LocalFiles.resetPrefix + String(path[slash...])
    }

    private func reset(_ details: ClientResetDetails) async {
        defer {
            isResetting = false
            statusTracker.update { $0.isResetting = false }
            let waiters = resetWaiters
            resetWaiters = []
            for waiter in waiters { waiter.resume() }
        }
        // Writes queued before the reset are part of the old store (and of what is recovered).
        do {
            try await flushed()
        } catch {
            return failed(error)
        }
        guard !isClosed, controller.state != .invalid else { return }
        let old = store
        // What the server holds of the client file, but never past a version it holds with other bytes than
        // this store's (seen earlier, by a reset that then failed: simulation seed 8062).
        let lastIntegrated = min(
            details.lastIntegratedClientVersion, UInt64(old.local.count), (divergedClientVersion ?? .max) - 1)
        let kept = Array(old.local(after: lastIntegrated))
        let payloads: [RecordPayload]
        do {
            payloads = try await old.file.read(kept.map(\.location))
        } catch {
            return failed(error)
        }
        guard !isClosed else { return }
        var unsynced: [UnsyncedChange] = []
        for (offset, payload) in payloads.enumerated() {
            let clientVersion = lastIntegrated + 1 + UInt64(offset)
            guard case .local(clientVersion, let data)? = try? Record(decoding: payload) else {
                return failedFatally(.storeCorrupted(path: old.file.path, offset: kept[offset].location.offset))
            }
            unsynced.append(
                UnsyncedChange(
                    clientVersion: clientVersion, data: Data(data),
                    wasAcknowledged: clientVersion <= old.acknowledgedClientVersion))
        }
        let report = ClientReset(
            partition: partition, mode: clientReset.mode, reason: details.reason, serverVersion: details.serverVersion,
            previousDownloadedVersion: old.downloadedVersion, previousClientFileID: old.clientFileID,
            clientFileID: clientReset.newClientFileID(), unsyncedChanges: unsynced)
        await announce(.willReset(report))
        guard !isClosed else { return }

        let path = old.file.path
        let temporary = Self.resetPath(for: path)
        // The new store remembers this reset (and those before it), so that write receipts from before it
        // answer the same after a relaunch.
        let lineage =
            (old.lineage
            + [
                ResetLineage(
                    replacedClientFileID: old.clientFileID, replacementClientFileID: report.clientFileID,
                    lastIntegrated: lastIntegrated, recovered: clientReset.mode == .recoverUnsyncedChanges,
                    reason: details.reason)
            ]).suffix(LocalStore.maximumLineage)
        let replacement: LocalStore
        do {
            replacement = try await build(
                report, lineage: Array(lineage), continuing: old, at: temporary, finalPath: path)
        } catch {
            return isClosed ? () : failed(error)
        }
        do throws(SyncError) {
            try clientReset.beforeSwap()
        } catch {
            // A simulated crash: the file stays, as a crash would leave it, and the session fails.
            await replacement.file.close()
            return failedFatally(error)
        }
        guard !isClosed else {
            // Shut down meanwhile: the old store stays (the server asks for the reset again next time).
            await replacement.file.close()
            await BlockingQueue.engine.run { _ = unlink(temporary) }
            return
        }
        let renamed: Int32? = await BlockingQueue.engine.run { DurableRename.rename(temporary, over: path) }
        if let code = renamed {
            await replacement.file.close()
            let error = SyncError.storageFailure("cannot rename \(temporary) over \(path) (errno \(code))")
            // The rename failed (the new store is still at its temporary path): nothing changed, try again
            // later. It happened but its directory fsync failed: the new store is in place, the old one may
            // come back after a power loss — this session cannot tell which it will be, so it stops.
            let happened = await BlockingQueue.engine.run { access(temporary, F_OK) != 0 }
            await BlockingQueue.engine.run { _ = unlink(temporary) }
            return happened ? failedFatally(error) : failed(error)
        }
        guard !isClosed else {
            // Shut down during the rename (it waits for this task): the new one is in place for the next
            // open; nothing is announced.
            return await replacement.file.close()
        }
        // Upload waiters: changesets up to `lastIntegrated` are in the log; those above it are the new store's
        // client versions 1, 2, … when recovered, and gone when discarded.
        for (ticket, waiter) in uploadWaiters {
            if waiter.target <= lastIntegrated {
                endUploadWaiter(ticket, with: nil)
            } else if clientReset.mode == .recoverUnsyncedChanges {
                uploadWaiters[ticket]?.target = waiter.target - lastIntegrated
            } else {
                endUploadWaiter(
                    ticket,
                    with: .clientResetRequired(
                        "a client reset discarded changesets written before the wait (\(details.reason))"))
            }
        }
        uploadedBase = uploadedBase.addingClamped(old.uploadedBytes)
        downloadedBase = downloadedBase.addingClamped(old.downloadedBytes)
        store = replacement
        divergedClientVersion = nil
        // Write receipts follow their writes: held by the server, recovered as the new client versions, or gone.
        receipts.replaced(
            lastIntegrated: lastIntegrated, recovered: clientReset.mode == .recoverUnsyncedChanges,
            error: ReceiptLedger.discarded(by: details.reason),
            by: replacement.clientFileID, written: UInt64(replacement.local.count),
            acknowledged: replacement.acknowledgedClientVersion)
        feed.replaceStore(with: replacement.file, restart: details.reason == .historyLost)
        // A changesets subscriber may be delivering a changeset it read from the old store: it reaches the
        // subscriber before `didReset` (which tells it the old history is over), never after (finding 12).
        await feed.settled()
        reportUploadProgress()
        controller.handle(.pendingUploads(store.hasUnacknowledged))
        // The new store was never fully synced: the status forgets the old store's time.
        statusTracker.update { $0.lastSyncedAt = nil }
        refreshPendingStatus()
        await old.file.close()
        logger.log(
            .warn, LogCategory.session,
            "\(partition): client reset done: client file \(report.previousClientFileID) → \(report.clientFileID), "
                + "\(unsynced.count) unsynced changesets "
                + (clientReset.mode == .recoverUnsyncedChanges ? "to upload again" : "dropped"))
        isResetting = false
        resetBackoff.reset()
        guard !isClosed else { return }
        await announce(.didReset(report))
        await reconcile()
    }

    /// A step of the reset failed. A storage failure (a full disk, an I/O error) may pass: the old store
    /// is untouched and stays in use, the error is reported (not fatal), and after a backoff that grows with
    /// each failure in a row the session registers again — the server then asks for the reset again, with
    /// what it holds by then. Any other failure (a corrupted store) is fatal.
    private func failed(_ error: SyncError) {
        guard !isClosed else { return }
        switch error {
        case .storageFailure, .storeInUse: break
        default: return failedFatally(error)
        }
        let timing = connection.retryTiming
        let delay = resetBackoff.delay(
            afterFailureOf: error.backoffKind, policy: timing.backoff, random: timing.random())
        logger.log(.error, LogCategory.session, "\(partition): client reset failed: \(error); trying again in \(delay)")
        report(error)
        statusTracker.update { $0.reconnect = (wallClock().addingTimeInterval(delay.timeInterval), error) }
        resetRetry?.cancel()
        resetRetry = timing.executor.schedule(after: delay) { [weak self] in
            Task { await self?.retryReset() }
        }
    }

    /// The backoff after a failed reset ended (or `reconnect()` was called): register again.
    func retryReset() async {
        guard let retry = resetRetry else { return }
        retry.cancel()
        resetRetry = nil
        await reconcile()
    }

    /// Writes the new store at `temporary` (one fsync for its `lineage` and the changesets it recovers,
    /// after the header's) and returns it open and locked. Removes what an interrupted reset left there
    /// first; on failure, removes what it wrote.
    private func build(
        _ report: ClientReset, lineage: [ResetLineage], continuing old: LocalStore, at temporary: String,
        finalPath: String
    ) async throws(SyncError)
        -> LocalStore
    {
        await BlockingQueue.engine.run { _ = unlink(temporary) }
        let id = report.clientFileID
        let (replacement, _, _) = try await LocalStore.open(
            path: temporary, fileSystem: clientReset.fileSystem, reportedPath: finalPath, newClientFileID: { id })
        do throws(SyncError) {
            // After `clientExpired` the changesets feed carries on after the version it reached: the new store
            // binds with the old one's history id and checkpoint, so a log restored meanwhile is noticed.
            var records = lineage.map { Record.lineage($0) }
            if report.reason == .clientExpired { records += replacement.recordsContinuing(old) }
            if report.mode == .recoverUnsyncedChanges {
                // Each recovered changeset keeps where it was first written, so that the server integrates it
                // once even when a copy of the old store (a backup) is reset and recovers it again.
                for change in report.unsyncedChanges {
                    records += replacement.recordsRecovered(
                        Array(change.data), origin: old.origin(of: change.clientVersion))
                }
            }
            if !records.isEmpty {
                let (locations, checksums) = try await replacement.file.appendChecksummed(records.map(\.payload))
                _ = replacement.apply(records, at: locations, bodyChecksums: checksums)
            }
        } catch {
            await replacement.file.close()
            await BlockingQueue.engine.run { _ = unlink(temporary) }
            throw error
        }
        return replacement
    }

    /// Delivers `event` on the callback executor — the app's handler, then `clientResets` subscribers —
    /// and returns once they returned.
    private func announce(_ event: ClientResetEvent) async {
        let handler = clientReset.handler
        let subject = clientResetSubject
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            callbackExecutor.execute {
                handler(event)
                subject.send(event)
                continuation.resume()
            }
        }
    }
}
