import SyncWire

/// One partition as the core holds it: the summary of every log entry (never all the bytes), byte counts
/// to answer "how much is left to send" in constant time, who owns each client file, the sessions bound
/// to it, a cache of recently appended bytes for live fan-out, and a FIFO gate that serialises the
/// partition's operations that wait for the store. Owned by `ServerCore`; used only on its executor.
///
/// A partition is *idle* when no session is bound to it, no operation holds or waits for its gate and no
/// pump reads from it: the core may then evict it (`unload()`, and the store's `unload`), and loads it
/// again on the next bind.
final class Partition {
    let name: String
    /// Whether `entries` holds what the store holds.
    private(set) var isLoaded = false
    /// Entries in server-version order; entry `i` has server version `i + 1`.
    private(set) var entries: [StoredChangesetSummary] = []
    /// `cumulativeBytes[v]`: the bytes of versions 1…v (`cumulativeBytes[0] == 0`).
    private var cumulativeBytes: [UInt64] = [0]
    /// Per client file: its versions and the cumulative bytes of its own entries up to each.
    private var ownBytes: [UInt64: OwnEntries] = [:]
    /// The highest client version integrated per client file.
    private(set) var lastClientVersion: [UInt64: UInt64] = [:]
    /// The server versions of the entries that integrated each origin other than their own client file and
    /// version (`StoredChangesetSummary.origin`: changesets a recovering client reset carried over;
    /// duplicates left out; more than one only when their bytes differ). An entry's own origin is found through `ownBytes`. Kept when a client file is
    /// forgotten: its changesets stay in the log, and so do their origins.
    private var recoveredOrigins: [ChangesetOrigin: [UInt64]] = [:]
    /// Who owns each client file: the credential identity that first used it here.
    private var owners: [UInt64: String] = [:]
    /// Sessions receiving the partition's entries.
    var subscribers: [SessionKey: BoundSession] = [:]
    /// The bytes of recently appended entries, so that sending them to bound sessions needs no read.
    private var recent = RecentChangesets(capacityBytes: 8 << 20)
    /// The identity of the log (`PartitionStore.historyID(of:)`; 0 when the store keeps none), read with
    /// the summaries.
    var historyID: UInt64 = 0
    /// When its client files were last seen and which were forgotten (see `ServerCore+ClientReset`).
    var clientFiles = ClientFileRegistry()

    /// Uploads waiting for the partition's next commit, in arrival order (`ServerCore+GroupCommit`).
    var queuedUploads: [QueuedUpload] = []
    /// Whether an upload task commits this partition's uploads (or is about to: the commit was handed
    /// to it); while it does, new uploads queue.
    var isCommittingUploads = false

    private var isBusy = false
    private var waiters: [CheckedContinuation<Void, Never>] = []
    /// Reads of the store for this partition in progress outside the gate (pumps sending entries).
    var readers = 0
    /// `prefixDigests[v - 1]`: the prefix digest D(v) of versions 1…v as a client that did not upload the
    /// log's duplicate entries holds them (`CRC32.prefixDigest` over each entry's `deliveredData`), filled
    /// lazily from the start by binds that name a prefix checkpoint (`ServerCore.checkpointRefusal`), 4
    /// bytes per version filled. The log only grows while loaded (a restore or unload empties it), so a
    /// filled value stays right.
    var prefixDigests: [UInt32] = []

    private struct OwnEntries {
        var versions: [UInt64] = []
        var cumulative: [UInt64] = []
    }

    init(name: String) { self.name = name }

    /// The server version of the last entry (0 for an empty log).
    var latestVersion: UInt64 { UInt64(entries.count) }

    /// The server version the next integrated changeset gets.
    var nextServerVersion: UInt64 { latestVersion + 1 }

    /// The summary of `version` (1…latestVersion).
    func entry(_ version: UInt64) -> StoredChangesetSummary { entries[Int(version - 1)] }

    /// Adopts a log read from the store after checking its versions are 1, 2, 3, ….
    func restore(from loaded: [StoredChangesetSummary]) throws(PartitionLogError) {
        for (index, entry) in loaded.enumerated() where entry.serverVersion != UInt64(index) + 1 {
            throw PartitionLogError(
                partition: name,
                expectedServerVersion: UInt64(index) + 1,
                foundServerVersion: entry.serverVersion
            )
        }
        entries = []
        cumulativeBytes = [0]
        ownBytes = [:]
        lastClientVersion = [:]
        recoveredOrigins = [:]
        owners = [:]
        recent = RecentChangesets(capacityBytes: recent.capacityBytes)
        prefixDigests = []
        append(loaded)
        isLoaded = true
    }

    /// Appends entries that follow the log (already stored durably), keeping their bytes in the recent cache.
    func append(_ stored: [StoredChangeset]) {
        append(stored.map(\.summary))
        for changeset in stored { recent.insert(changeset) }
    }

    /// Appends summaries of entries that follow the log (their bytes are read from the store when sent).
    func append(_ summaries: [StoredChangesetSummary]) {
        for entry in summaries {
            entries.append(entry)
            // A duplicate reaches other clients empty, and its uploader holds its bytes already.
            let bytes = UInt64(entry.deliveredByteCount)
            cumulativeBytes.append(cumulativeBytes[cumulativeBytes.count - 1] + bytes)
            var own = ownBytes[entry.clientFileID] ?? OwnEntries()
            own.versions.append(entry.serverVersion)
            own.cumulative.append((own.cumulative.last ?? 0) + bytes)
            ownBytes[entry.clientFileID] = own
            lastClientVersion[entry.clientFileID] = max(lastClientVersion[entry.clientFileID] ?? 0, entry.clientVersion)
            if owners[entry.clientFileID] == nil { owners[entry.clientFileID] = entry.owner }
            if entry.duplicateOf == nil, let origin = entry.origin {
                recoveredOrigins[origin, default: []].append(entry.serverVersion)
            }
        }
    }

    /// The server versions of the entries that integrated `origin` (never a duplicate entry), oldest first:
    /// the changeset its client file uploaded itself under that client version, and those recovered with
    /// that origin. A forgotten client file's own entries are no longer indexed: an upload of its changeset
    /// recovered again is then integrated, as before origins.
    func entries(integrating origin: ChangesetOrigin) -> [UInt64] {
        var versions = recoveredOrigins[origin] ?? []
        if let version = serverVersion(of: origin.clientFileID, clientVersion: origin.clientVersion),
            entry(version).origin == nil, entry(version).duplicateOf == nil
        {
            versions.insert(version, at: 0)
        }
        return versions
    }

    /// The server version of `clientFileID`'s changeset `clientVersion` (client versions are 1, 2, 3, … along
    /// the log), or `nil` when the log does not hold it (or forgot the client file).
    func serverVersion(of clientFileID: UInt64, clientVersion: UInt64) -> UInt64? {
        guard clientVersion >= 1, let own = ownBytes[clientFileID], clientVersion <= UInt64(own.versions.count) else {
            return nil
        }
        let version = own.versions[Int(clientVersion - 1)]
        return entry(version).clientVersion == clientVersion ? version : nil
    }

    /// The owner of `clientFileID`, claiming it for `owner` if nobody has; `nil` when another owns it.
    func claim(_ clientFileID: UInt64, for owner: String) -> Bool {
        if let existing = owners[clientFileID] { return existing == owner }
        owners[clientFileID] = owner
        return true
    }

    /// Forgets what is kept about `clientFileID` beside its entries: its owner, the last client version
    /// integrated and its byte counts (a forgotten client file is never bound again).
    func forget(_ clientFileID: UInt64) {
        owners[clientFileID] = nil
        lastClientVersion[clientFileID] = nil
        ownBytes[clientFileID] = nil
    }

    /// The bytes other clients' entries in versions `(after, latestVersion]` hold, as seen by `clientFileID`.
    func remainingBytes(after version: UInt64, for clientFileID: UInt64) -> UInt64 {
        let latest = latestVersion
        guard version < latest else { return 0 }
        let all = cumulativeBytes[Int(latest)] - cumulativeBytes[Int(version)]
        // Own bytes in the range, subtracted as one amount (own bytes before `version` may exceed `all`).
        return all - (ownBytes(of: clientFileID, through: latest) - ownBytes(of: clientFileID, through: version))
    }

    /// The bytes of `clientFileID`'s own entries with versions up to `version`.
    private func ownBytes(of clientFileID: UInt64, through version: UInt64) -> UInt64 {
        guard let own = ownBytes[clientFileID] else { return 0 }
        // The number of own versions ≤ version (binary search over the sorted versions).
        var low = 0
        var high = own.versions.count
        while low < high {
            let middle = (low + high) / 2
            if own.versions[middle] <= version { low = middle + 1 } else { high = middle }
        }
        return low == 0 ? 0 : own.cumulative[low - 1]
    }

    /// The cached bytes of `version`, if still in the recent cache.
    func cachedData(of version: UInt64) -> [UInt8]? { recent.data(of: version) }

    /// `CRC32.checksum` of the cached bytes of `version`, if still in the recent cache and computed at upload.
    func cachedChecksum(of version: UInt64) -> UInt32? { recent.checksum(of: version) }

    /// Whether nothing uses the partition: no bound session, no operation holding or awaiting the gate, no
    /// read in progress, no upload committing or queued.
    var isIdle: Bool { subscribers.isEmpty && !isBusy && readers == 0 && !isCommittingUploads }

    /// Forgets what was loaded (entries, owners, cached bytes), so that the next `restore` reads the store
    /// again. Call while holding the gate, with no session bound.
    func unload() {
        entries = []
        cumulativeBytes = [0]
        ownBytes = [:]
        lastClientVersion = [:]
        recoveredOrigins = [:]
        owners = [:]
        recent = RecentChangesets(capacityBytes: recent.capacityBytes)
        prefixDigests = []
        isLoaded = false
    }

    /// Waits until no other operation holds the partition, then holds it (first come, first served).
    func acquire(isolation: isolated (any Actor)? = #isolation) async {
        if isBusy {
            await withCheckedContinuation(isolation: isolation) { waiters.append($0) }
        } else {
            isBusy = true
        }
    }

    /// Lets the next waiting operation hold the partition, or frees it.
    func release() {
        if waiters.isEmpty {
            isBusy = false
        } else {
            waiters.removeFirst().resume()
        }
    }
}
