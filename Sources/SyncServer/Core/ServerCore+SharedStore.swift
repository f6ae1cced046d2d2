import SyncStorage
import SyncWire

/// Serving partitions whose store other front ends write too (`PartitionStore`'s "shared stores").
///
/// The core's view of a partition (`Partition`'s summaries) may trail the store. Three things bring it
/// up to date, each by reading the summaries after the view's latest version (`refresh(_:)`) while
/// holding the partition's gate, and each then starts the bound sessions' pumps, which send every
/// session the new entries from its cursor, in version order, once:
///
/// - an append refused with `PartitionStoreConflict` (another front end took those versions): refresh,
///   drop the uploaded changesets the log now holds, retry under the next versions;
/// - an `AppendNotification` for a loaded partition that is ahead of the view;
/// - a bind whose `downloadedVersion` is past the view (the client downloaded it through another front
///   end), and a `mark` (so `marked` covers everything committed anywhere before the mark arrived).
extension ServerCore {
    /// Whether other writers may append to the store (it announces appends).
    var isSharedStore: Bool { appendNotifications != nil }

    /// How many conflicts in a row whose refresh found nothing new (a store whose conflicts name entries
    /// its summaries never show) an upload survives before the session is told to retry later. A conflict
    /// lost to another writer's append costs a retry only, however many there are in a row.
    static let maximumFruitlessConflicts = 8
    /// The longest pause before retrying an append after conflicts in a row (it doubles from 1 ms, with
    /// full jitter), so that front ends contending for one partition spread their retries.
    static let maximumConflictBackoffMilliseconds = 32
    /// How many catch-ups in a row may fail to reach an announced version before the core gives up on it
    /// (until the next notification).
    static let maximumCatchUpAttempts = 10

    /// What `storeUploads` did with one upload.
    enum UploadOutcome {
        /// These entries were appended to the store and to the partition.
        case stored([StoredChangeset])
        /// Every changeset was integrated before (a re-upload); nothing was stored.
        case nothingFresh
        /// The upload starts past the client file's last integrated version: the server lost versions the
        /// client saw acknowledged (its history regressed), a `.clientResetRequired` with this message and
        /// these details (`historyLost`).
        case skippedVersion(String, ClientResetDetails)
        /// The store failed: an `.internalError` with this message.
        case failed(String)
    }

    /// An upload to store (`storeUploads`): its changesets, its session and its uploader's identity.
    struct PendingUpload {
        let changesets: [UploadChangeset]
        let session: BoundSession
        let owner: String
    }

    /// Stores, for each of `uploads` (sessions of the partition, at most one per client file), the
    /// changesets that the partition does not hold yet for its session's client file, under the versions
    /// after the partition's latest, in the order of `uploads`, with one `PartitionStore.append` for all of
    /// them, and appends them to the partition. Returns each upload's outcome, in order. Call while holding
    /// the partition's gate.
    ///
    /// When the store refuses with `PartitionStoreConflict`, or the first fresh changeset of an upload does
    /// not follow its client file's last integrated version, the partition is refreshed from the store
    /// first and the changesets filtered again: what another front end integrated meanwhile is not stored
    /// twice. A failing append (or a failing read of the store) fails every upload it would have stored.
    func storeUploads(_ uploads: [PendingUpload], in partition: Partition) async -> [UploadOutcome] {
        var outcomes = [UploadOutcome?](repeating: nil, count: uploads.count)
        var hasRefreshedForSkip = false
        var conflicts = 0
        var fruitless = 0
        // The CRC-32 of each changeset, computed once (kept across a conflict's retry), by upload and client
        // version: the one pass over the bytes on the server, used by the file store's record checksum and
        // the acknowledgement digest (`nextDownload`, from the partition's recent cache).
        var checksums: [[UInt64: UInt32]] = Array(repeating: [:], count: uploads.count)
        func failingUndecided(_ message: String) -> [UploadOutcome] { outcomes.map { $0 ?? .failed(message) } }
        while true {
            var stored: [StoredChangeset] = []
            var ranges: [(upload: Int, entries: Range<Int>)] = []
            var mustRefresh = false
            for (index, upload) in uploads.enumerated() where outcomes[index] == nil {
                let session = upload.session
                let integrated = partition.lastClientVersion[session.clientFileID] ?? 0
                let fresh = upload.changesets.filter { $0.clientVersion > integrated }
                guard let first = fresh.first else {
                    outcomes[index] = .nothingFresh
                    continue
                }
                guard first.clientVersion == integrated + 1 else {
                    // Another front end may have integrated the versions in between: look before failing.
                    if isSharedStore && !hasRefreshedForSkip {
                        mustRefresh = true
                        break
                    }
                    outcomes[index] = .skippedVersion(
                        "client version \(first.clientVersion) of client file \(session.clientFileID) follows "
                            + "\(integrated): the server lost versions the client saw acknowledged; the client must be reset",
                        ClientResetDetails(
                            reason: .historyLost, serverVersion: partition.latestVersion,
                            lastIntegratedClientVersion: integrated))
                    continue
                }
                let start = stored.count
                for changeset in fresh {
                    var entry = StoredChangeset(
                        serverVersion: partition.nextServerVersion + UInt64(stored.count),
                        clientFileID: session.clientFileID,
                        clientVersion: changeset.clientVersion,
                        data: changeset.data,
                        owner: upload.owner,
                        origin: store.storesChangesetOrigins ? changeset.origin : nil
                    )
                    let checksum = checksums[index][changeset.clientVersion] ?? CRC32.checksum(changeset.data)
                    checksums[index][changeset.clientVersion] = checksum
                    entry.dataChecksum = checksum
                    stored.append(entry)
                }
                ranges.append((index, start..<stored.count))
            }
            if mustRefresh {
                hasRefreshedForSkip = true
                do { try await refresh(partition) } catch {
                    return failingUndecided("could not read \(partition.name) from the store: \(error)")
                }
                continue
            }
            guard !stored.isEmpty else { return failingUndecided("nothing to store") }  // every one decided
            if store.storesChangesetOrigins {
                do { try await markDuplicates(&stored, in: partition) } catch {
                    return failingUndecided("could not read \(partition.name) from the store: \(error)")
                }
            }
            do {
                try await store.append(stored, to: partition.name)
                partition.append(stored)
                for (upload, entries) in ranges { outcomes[upload] = .stored(Array(stored[entries])) }
                return failingUndecided("not stored")  // every one decided
            } catch let conflict as PartitionStoreConflict {
                conflicts += 1
                logger.log(.detail, Self.category, "\(partition.name): \(conflict); reading the new entries")
                let before = partition.latestVersion
                do { try await refresh(partition) } catch {
                    return failingUndecided("could not read \(partition.name) from the store: \(error)")
                }
                fruitless = partition.latestVersion > before ? 0 : fruitless + 1
                guard fruitless < Self.maximumFruitlessConflicts else {
                    return failingUndecided(
                        "could not store the upload: \(conflict), but the store shows no new entries "
                            + "(\(fruitless) times in a row)")
                }
                if conflicts > 1 {
                    let ceiling = min(1 << min(conflicts - 2, 16), Self.maximumConflictBackoffMilliseconds)
                    try? await Task.sleep(for: .microseconds(Int.random(in: 0...(ceiling * 1_000))))
                }
            } catch {
                return failingUndecided("could not store the upload: \(error)")
            }
        }
    }

    /// Marks each changeset of `stored` (an upload about to be appended) whose origin the log — or an earlier
    /// changeset of `stored` — already integrated with the same bytes as a duplicate of that entry
    /// (`StoredChangeset.duplicateOf`): it is appended to keep its uploader's client versions following each
    /// other and to acknowledge it, but other clients receive it empty. An origin held with other bytes (a
    /// copied client file that reused a version number, reset and recovering its own changeset) is not a
    /// duplicate. Call while holding the partition's gate.
    ///
    /// - Throws: what the store throws when reading the bytes of an entry that holds such an origin.
    private func markDuplicates(_ stored: inout [StoredChangeset], in partition: Partition) async throws {
        var pending: [ChangesetOrigin: Int] = [:]
        for index in stored.indices {
            let origin = stored[index].effectiveOrigin
            if let earlier = pending[origin] {
                if stored[earlier].data == stored[index].data {
                    stored[index].duplicateOf = stored[earlier].duplicateOf ?? stored[earlier].serverVersion
                }
                continue
            }
            pending[origin] = index
            for version in partition.entries(integrating: origin) {
                if try await changesetData(at: version, of: partition) == stored[index].data {
                    stored[index].duplicateOf = version
                    break
                }
            }
        }
    }

    /// Reads the entries the store holds after the partition's latest version, appends their summaries,
    /// and starts the pumps of the partition's sessions when there were some. Call while holding the
    /// partition's gate, on a loaded partition.
    ///
    /// - Throws: what the store throws, or `PartitionLogError` when the entries do not continue the log.
    func refresh(_ partition: Partition) async throws {
        let newer = try await store.summaries(of: partition.name, after: partition.latestVersion)
        guard !newer.isEmpty else { return }
        try partition.extend(with: newer)
        logger.log(
            .debug, Self.category,
            "\(partition.name): read versions \(newer[0].serverVersion)…\(partition.latestVersion) appended by others")
        for subscriber in partition.subscribers.values { startPump(subscriber) }
    }

    /// Loads the partition and, if `version` is past its latest (a client downloaded more through another
    /// front end), refreshes it. Call while holding its gate.
    func load(_ partition: Partition, reaching version: UInt64) async throws {
        try await load(partition)
        if version > partition.latestVersion { try await refresh(partition) }
    }

    /// Loads the partition, or refreshes it if already loaded and the store is shared. Call while holding
    /// its gate.
    func loadCurrent(_ partition: Partition) async throws {
        if partition.isLoaded && isSharedStore {
            try await refresh(partition)
        } else {
            try await load(partition)
        }
    }

    /// `mark`, after refreshing the session's partition when the store is shared, so that `marked` means
    /// everything committed by any front end before the mark arrived was sent. A failed refresh is logged
    /// and the mark answered against what the core holds.
    func markCaughtUp(_ sessionID: UInt32, id: UInt64, on connection: ConnectionState) async {
        if isSharedStore, let session = connection.sessions[sessionID], session.partition.isLoaded {
            let partition = session.partition
            await partition.acquire()
            do { try await refresh(partition) } catch {
                logger.log(.warn, Self.category, "\(partition.name): could not read new entries for a mark: \(error)")
            }
            release(partition)
        }
        mark(sessionID, id: id, on: connection)
    }

    // MARK: - Notifications

    /// Starts a task that consumes the store's append notifications (see `PartitionStore.
    /// appendNotifications()`), or returns `nil` for a store only this server writes. Cancel the task to
    /// stop following; it holds the core weakly.
    nonisolated func followAppendNotifications() -> Task<Void, Never>? {
        guard let notifications = appendNotifications else { return nil }
        return Task { [weak self] in
            for await notification in notifications {
                guard let self else { return }
                await self.storeAppended(notification)
            }
        }
    }

    /// Handles one notification: a served partition whose view trails it is caught up by one task per
    /// partition at a time (later notifications only raise its target). A partition being loaded counts:
    /// its load may have read the log just before the announced append committed.
    func storeAppended(_ notification: AppendNotification) {
        guard let partition = partitions[PartitionName(notification.partition)],
            !partition.isLoaded || notification.latestVersion > partition.latestVersion
        else { return }
        if let target = catchUpTargets[PartitionName(partition.name)] {
            catchUpTargets[PartitionName(partition.name)] = max(target, notification.latestVersion)
            return
        }
        catchUpTargets[PartitionName(partition.name)] = notification.latestVersion
        Task { await self.catchUp(partition) }
    }

    /// Refreshes `partition` until its view reaches the highest version announced for it. A failed or
    /// fruitless refresh is retried after `retryAfterStorageFailure`, at most `maximumCatchUpAttempts`
    /// times in a row; it ends early when the partition is no longer served.
    private func catchUp(_ partition: Partition) async {
        defer { catchUpTargets[PartitionName(partition.name)] = nil }
        var attempts = 0
        while let target = catchUpTargets[PartitionName(partition.name)],
            partitions[PartitionName(partition.name)] === partition
        {
            await partition.acquire()
            guard partition.isLoaded, partition.latestVersion < target else {
                release(partition)
                return
            }
            let before = partition.latestVersion
            do {
                try await refresh(partition)
            } catch {
                logger.log(.warn, Self.category, "\(partition.name): could not read new entries: \(error)")
            }
            let progressed = partition.latestVersion > before
            release(partition)
            attempts = progressed ? 0 : attempts + 1
            if attempts >= Self.maximumCatchUpAttempts {
                logger.log(
                    .error, Self.category,
                    "\(partition.name): the store announced version \(target) but its log ends at "
                        + "\(partition.latestVersion); waiting for the next append")
                return
            }
            if !progressed { try? await Task.sleep(for: .milliseconds(Int(Self.retryAfterStorageFailure))) }
        }
    }
}
