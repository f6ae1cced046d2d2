import Foundation
import SyncStorage
import SyncWire

/// One session's durable local copy of its partition: what the user wrote, what the server acknowledged,
/// and what was downloaded — an append-only record file (`StoreFile`), of which only an index stays in
/// memory: where each record is and how big it is, never the changesets' bytes. Memory is in proportion to
/// the number of changesets, not their size; bytes are read back from the file when they are uploaded or
/// replayed to a `changesets` subscriber.
///
/// Writing is in two steps, so that writes issued together share one fsync (group commit): records are
/// first made (`recordLocal`, `records(for:)`), which reserves their client and server versions; the
/// owner makes them durable through `file` and then `apply`s them with their locations, which is when they
/// count (acknowledged bytes, synced changesets, progress). The index of synced changesets lives in the
/// session's `ChangesetFeed`, which replays them. Not thread-safe: its session's actor owns it.
final class LocalStore {
    /// A durable local changeset.
    struct LocalEntry: Sendable {
        /// Where its `.local` record is.
        let location: RecordLocation
        let byteCount: Int
        /// The CRC-32 of its bytes, checked against an acknowledgement's digest (`Download.acknowledgedDigests`).
        let digest: UInt32
        /// Set once the server acknowledged it.
        var serverVersion: UInt64?
        /// Where it was first written when a recovering client reset carried it over from a replaced store
        /// (`Record.origin`, `UploadChangeset.origin`); `nil` for a changeset written to this store.
        var origin: ChangesetOrigin?
    }

    /// The file, on its own queue.
    let file: StoreFile
    /// Identifies this file to the server (random, chosen when the file was created).
    let clientFileID: UInt64
    /// What is durable: every local changeset, every synced changeset, and the counts.
    private(set) var index: Index
    /// The highest client version assigned, durable or not yet.
    private(set) var reservedClientVersion: UInt64
    /// The highest server version held or on its way to the file.
    private(set) var reservedDownloadedVersion: UInt64
    /// The highest client version acknowledged in a download already turned into records.
    private(set) var reservedAcknowledgedClientVersion: UInt64

    private init(file: StoreFile, index: Index) {
        self.file = file
        clientFileID = index.clientFileID ?? 0
        self.index = index
        reservedClientVersion = UInt64(index.local.count)
        reservedDownloadedVersion = index.downloadedVersion
        reservedAcknowledgedClientVersion = index.acknowledgedClientVersion
        reservedHistoryID = index.historyID
    }

    /// Every durable local changeset, in client-version order (client version n is at index n − 1).
    var local: [LocalEntry] { index.local }
    /// Client versions up to this one are acknowledged.
    var acknowledgedClientVersion: UInt64 { index.acknowledgedClientVersion }
    /// The identity of the server's log the store's versions come from (`Download.historyID`), once durable;
    /// 0 before the first download told it.
    var historyID: UInt64 { index.historyID ?? 0 }
    /// The history id held or on its way to the file.
    private var reservedHistoryID: UInt64?
    /// The highest server version held (downloaded or acknowledged) in the file.
    var downloadedVersion: UInt64 { index.downloadedVersion }
    /// The prefix digest D(`downloadedVersion`) of every changeset held at versions 1…`downloadedVersion`
    /// (`CRC32.prefixDigest`: downloaded ones and this store's own acknowledged ones); `nil` when none is.
    var downloadedDigest: UInt32? { index.downloadedDigest }
    /// What a bind names to the server (`Bind.checkpoint`): the checkpoint a `clientExpired` reset carried
    /// over from the store it replaced (where the changesets feed got to), while this store has not
    /// downloaded that far (it downloads the log again from version 1, so its own prefix digest is computed
    /// from the start); otherwise the prefix digest at `downloadedVersion`. `nil` when there is none.
    var checkpoint: LogCheckpoint? {
        if let carried = index.checkpoint, carried.serverVersion > index.downloadedVersion { return carried }
        guard index.downloadedVersion > 0, let digest = index.downloadedDigest else { return nil }
        return LogCheckpoint(serverVersion: index.downloadedVersion, digest: digest, coversPrefix: true)
    }
    /// Bytes of local changesets, all and acknowledged.
    var uploadableBytes: Int { index.uploadableBytes }
    var uploadedBytes: Int { index.uploadedBytes }
    /// Bytes of other clients' changesets downloaded.
    var downloadedBytes: Int { index.downloadedBytes }
    /// When the session was last fully synced, as durably recorded (`Record.synced`); `nil` if never.
    var lastSyncedAt: Date? { index.lastSyncedAt }
    /// What the client resets before this store did to the stores they replaced, oldest first (at most
    /// `maximumLineage`): a write receipt from before a reset and a relaunch is answered from it.
    var lineage: [ResetLineage] { index.lineage }
    /// The first client version of this store that the server acknowledged with other bytes, as durably
    /// recorded (`Record.diverged`); `nil` if none was. A client reset of this store never counts a version
    /// from there on as held by the server (simulation seed 8062).
    var divergedClientVersion: UInt64? { index.divergedClientVersion }
    /// How many resets a store remembers: a receipt from a store replaced longer ago is not known.
    static let maximumLineage = 32
    /// Unacknowledged local changesets and their bytes (what `SyncStatus.pending` reports for upload).
    var unacknowledgedCount: Int { local.count - Int(acknowledgedClientVersion) }
    var unacknowledgedBytes: Int { max(0, uploadableBytes - uploadedBytes) }

    /// Opens (or creates) the store at `path` (through `fileSystem`), building the index off the cooperative
    /// pool.
    ///
    /// - Throws: `.storeInUse` when another app has it open, `.storeCorrupted` for damage that is not a
    ///   torn final write, `.storageFailure` when the file cannot be read or written.
    ///
    /// `reportedPath` (default: `path`): the path errors name (see `StoreFile.open`).
    static func open(
        path: String,
        fileSystem: any FileSystem = SystemFileSystem(),
        reportedPath: String? = nil,
        newClientFileID: @escaping @Sendable () -> UInt64
    ) async throws(SyncError) -> (store: LocalStore, synced: [SyncedEntry], discardedBytes: Int) {
        let builder = IndexBuilder(path: reportedPath ?? path)
        let (file, discardedBytes) = try await StoreFile.open(
            path: path, fileSystem: fileSystem, reportedPath: reportedPath
        ) { location, bytes, checksum in
            builder.add(location, bytes, checksum: checksum)
        }
        if let failure = builder.failure {
            await file.close()
            throw failure
        }
        if builder.index.clientFileID == nil {
            let id = newClientFileID()
            let header = Record.header(clientFileID: id).payload
            do throws(SyncError) {
                _ = try await file.append([header])
            } catch {
                await file.close()
                throw error
            }
            builder.index.clientFileID = id
        }
        return (LocalStore(file: file, index: builder.index), builder.synced, discardedBytes)
    }

    /// Durable local changesets the server has not acknowledged yet, from `clientVersion` on.
    func unacknowledged(from clientVersion: UInt64) -> ArraySlice<LocalEntry> {
        let start = max(clientVersion, acknowledgedClientVersion + 1)
        guard start >= 1, start <= UInt64(local.count) else { return [] }
        return local[Int(start - 1)...]
    }

    /// Durable local changesets with client versions above `clientVersion`, in order (those a server that
    /// integrated up to `clientVersion` does not hold).
    func local(after clientVersion: UInt64) -> ArraySlice<LocalEntry> {
        let start = Int(min(clientVersion, UInt64(local.count)))
        return local[start...]
    }

    /// Whether durable local changesets wait for acknowledgement.
    var hasUnacknowledged: Bool { acknowledgedClientVersion < UInt64(local.count) }

    /// The records with which a new store, made by a `clientExpired` reset of `old` (the server kept its
    /// log, so the changesets feed carries on after the version it reached), continues `old`'s view of the
    /// log: its history id and its checkpoint. The server checks them at the next bind: a log restored from
    /// an older copy meanwhile is `historyLost` (the feed then starts again from the new log), never skipped.
    func recordsContinuing(_ old: LocalStore) -> [Record] {
        var records: [Record] = []
        if reservedHistoryID == nil, old.historyID != 0 {
            reservedHistoryID = old.historyID
            records.append(.history(id: old.historyID))
        }
        if let checkpoint = old.checkpoint {
            records.append(
                .checkpoint(
                    serverVersion: checkpoint.serverVersion, digest: checkpoint.digest,
                    coversPrefix: checkpoint.coversPrefix))
        }
        return records
    }

    /// Forgets the versions reserved by records that will not become durable (their append failed, and
    /// every record made after them is dropped too): the next records continue from what is durable.
    func dropReservations() {
        reservedClientVersion = UInt64(index.local.count)
        reservedDownloadedVersion = index.downloadedVersion
        reservedAcknowledgedClientVersion = index.acknowledgedClientVersion
    }

    /// The record of a new local changeset, with the next client version.
    func recordLocal(_ data: [UInt8]) -> Record {
        reservedClientVersion += 1
        return .local(clientVersion: reservedClientVersion, data: data)
    }

    /// The records of a changeset a recovering client reset carries over, with the next client version: its
    /// `.local` record, then the `.origin` record naming where it was first written.
    func recordsRecovered(_ data: [UInt8], origin: ChangesetOrigin) -> [Record] {
        let local = recordLocal(data)
        return [
            local,
            .origin(
                clientVersion: reservedClientVersion, originClientFileID: origin.clientFileID,
                originClientVersion: origin.clientVersion),
        ]
    }

    /// The origin of this store's changeset `clientVersion` (1…local.count): where it was first written —
    /// the origin it was recovered with, or this client file and `clientVersion`.
    func origin(of clientVersion: UInt64) -> ChangesetOrigin {
        local[Int(clientVersion - 1)].origin
            ?? ChangesetOrigin(clientFileID: clientFileID, clientVersion: clientVersion)
    }

    /// The records of a download's entries. Entries at or below the highest server version held or on its
    /// way (sent again after a reconnect) are skipped; the others must continue that version without a
    /// gap, and acknowledge this client's changesets in order, only ones it wrote.
    ///
    /// A download's `historyID` (the first of a bind carries it) becomes a `.history` record when the store
    /// holds none yet (a server that keeps no identity sends 0, which is not recorded). An acknowledgement
    /// whose server version is among `duplicates` (`Download.acknowledgedDuplicates`) becomes a
    /// `.duplicateAcknowledged` record: the changesets feed delivers that version empty.
    ///
    /// - Throws: `.protocolViolation(…, isFatal: true)` for a gap in server versions, an acknowledgement
    ///   of a client version that is not the next one written and unacknowledged, or a history id other
    ///   than the one held (the server must refuse such a bind with `clientResetRequired`).
    func records(
        for entries: [DownloadEntry], historyID: UInt64? = nil, duplicates: [UInt64] = []
    ) throws(SyncError) -> [Record] {
        var records: [Record] = []
        if let historyID, historyID != 0 {
            if let held = reservedHistoryID {
                guard held == historyID else {
                    throw .protocolViolation(
                        "the server's log has history id \(historyID), the local copy comes from \(held)",
                        isFatal: true)
                }
            } else {
                reservedHistoryID = historyID
                records.append(.history(id: historyID))
            }
        }
        var expected = reservedDownloadedVersion + 1
        var nextAcknowledged = reservedAcknowledgedClientVersion + 1
        for entry in entries where entry.serverVersion >= expected {
            guard entry.serverVersion == expected else {
                throw .protocolViolation(
                    "the server sent version \(entry.serverVersion) where \(expected) was due", isFatal: true)
            }
            switch entry {
            case .changeset(let serverVersion, let data):
                records.append(.downloaded(serverVersion: serverVersion, data: data))
            case .acknowledged(let serverVersion, let clientVersion):
                guard clientVersion == nextAcknowledged, clientVersion <= UInt64(local.count) else {
                    throw .protocolViolation(
                        "acknowledgement of client version \(clientVersion); the next unacknowledged one written is "
                            + (nextAcknowledged <= UInt64(local.count) ? "\(nextAcknowledged)" : "none"),
                        isFatal: true)
                }
                nextAcknowledged += 1
                records.append(
                    duplicates.contains(serverVersion)
                        ? .duplicateAcknowledged(serverVersion: serverVersion, clientVersion: clientVersion)
                        : .acknowledged(serverVersion: serverVersion, clientVersion: clientVersion))
            }
            expected += 1
        }
        reservedDownloadedVersion = expected - 1
        reservedAcknowledgedClientVersion = nextAcknowledged - 1
        return records
    }

    /// The first acknowledgement of `entries` whose digest (`digests`, one per acknowledgement, or none)
    /// differs from this store's own changeset under that client version: the server acknowledged another
    /// changeset under the same client file and version (this store was copied, or restored from a
    /// backup, and reused the version number) — or an acknowledgement of a client version this store never
    /// wrote durably: the server can only have it from another copy of this client file (this store uploads
    /// only durable changesets), e.g. a backup restored from before that write, which has not written a
    /// version of its own under that number yet. `nil` when all match (without digests: when every
    /// acknowledged version was written here).
    func divergedAcknowledgement(
        in entries: [DownloadEntry], digests: [UInt32]
    ) -> (serverVersion: UInt64, clientVersion: UInt64)? {
        var next = digests.makeIterator()
        for entry in entries {
            guard case .acknowledged(let serverVersion, let clientVersion) = entry else { continue }
            let digest = next.next()
            guard clientVersion >= 1 else { continue }
            guard clientVersion <= UInt64(local.count) else { return (serverVersion, clientVersion) }
            if let digest, local[Int(clientVersion - 1)].digest != digest { return (serverVersion, clientVersion) }
        }
        return nil
    }

    /// Counts durable records at their locations; returns the changesets they made known (synced), in order.
    /// `bodyChecksums` (from `StoreFile.appendChecksummed`, one per record, or none) are the CRC-32s of the
    /// records' changesets, a local changeset's digest: given, the bytes are not checksummed again here.
    func apply(_ records: [Record], at locations: [RecordLocation], bodyChecksums: [UInt32] = []) -> [SyncedEntry] {
        var new: [SyncedEntry] = []
        for (offset, (record, location)) in zip(records, locations).enumerated() {
            let checksum = offset < bodyChecksums.count ? bodyChecksums[offset] : nil
            if let entry = index.apply(record, at: location, bodyChecksum: checksum) { new.append(entry) }
        }
        return new
    }
}

/// What one client reset did to the store it replaced, durable in the replacement (`Record.lineage`, with
/// those of the resets before it) so that write receipts answer the same after a relaunch: the replaced
/// store's client versions up to `lastIntegrated` are held by the server; the others are the replacement's
/// client versions 1, 2, … when `recovered`, else discarded.
struct ResetLineage: Sendable, Hashable {
    let replacedClientFileID: UInt64
    let replacementClientFileID: UInt64
    let lastIntegrated: UInt64
    let recovered: Bool
    let reason: ClientResetReason
}

/// A synced changeset in the index: its server version and the record holding its bytes (the `.local`
/// record for this client's own changesets, the `.downloaded` record for others').
struct SyncedEntry: Sendable, Hashable {
    let serverVersion: UInt64
    let location: RecordLocation
}

/// The in-memory index of a store, as built at open and kept up to date by `apply`.
struct Index: Sendable {
    var clientFileID: UInt64?
    var local: [LocalStore.LocalEntry]
    var historyID: UInt64?
    var acknowledgedClientVersion: UInt64 = 0
    var downloadedVersion: UInt64 = 0
    /// The prefix digest D(`downloadedVersion`) (`CRC32.prefixDigest`) of the changesets held at versions
    /// 1…`downloadedVersion` (own acknowledged or downloaded); `nil` when none is held (or the versions held
    /// had a gap, which `LocalStore.records(for:)` never makes).
    var downloadedDigest: UInt32?
    /// The checkpoint carried over by a `clientExpired` reset (`LocalStore.recordsContinuing`).
    var checkpoint: LogCheckpoint?
    var uploadableBytes = 0
    var uploadedBytes = 0
    var downloadedBytes = 0
    var lastSyncedAt: Date?
    var lineage: [ResetLineage] = []
    /// The lowest client version recorded as diverged (`Record.diverged`).
    var divergedClientVersion: UInt64?

    /// Counts one durable record; returns the synced changeset it made known, if any. `bodyChecksum`: the
    /// CRC-32 of a changeset record's bytes when known (from the append, or the open's record scan), else
    /// computed here.
    mutating func apply(_ record: Record, at location: RecordLocation, bodyChecksum: UInt32? = nil) -> SyncedEntry? {
        switch record {
        case .header:
            return nil
        case .history(let id):
            historyID = id
            return nil
        case .checkpoint(let serverVersion, let digest, let coversPrefix):
            checkpoint = LogCheckpoint(serverVersion: serverVersion, digest: digest, coversPrefix: coversPrefix)
            return nil
        case .synced(let date):
            lastSyncedAt = date
            return nil
        case .lineage(let reset):
            lineage.append(reset)
            return nil
        case .diverged(let clientVersion):
            divergedClientVersion = min(divergedClientVersion ?? .max, clientVersion)
            return nil
        case .origin(let clientVersion, let originClientFileID, let originClientVersion):
            guard clientVersion >= 1, clientVersion <= UInt64(local.count) else { return nil }
            local[Int(clientVersion - 1)].origin = ChangesetOrigin(
                clientFileID: originClientFileID, clientVersion: originClientVersion)
            return nil
        case .local(_, let data):
            local.append(
                LocalStore.LocalEntry(
                    location: location, byteCount: data.count, digest: bodyChecksum ?? CRC32.checksum(data),
                    serverVersion: nil))
            uploadableBytes += data.count
            return nil
        case .acknowledged(let serverVersion, let clientVersion),
            .duplicateAcknowledged(let serverVersion, let clientVersion):
            guard clientVersion >= 1, clientVersion <= UInt64(local.count) else { return nil }
            let index = Int(clientVersion - 1)
            guard local[index].serverVersion == nil else { return nil }
            local[index].serverVersion = serverVersion
            acknowledgedClientVersion = max(acknowledgedClientVersion, clientVersion)
            uploadedBytes += local[index].byteCount
            guard case .duplicateAcknowledged = record else {
                if serverVersion > downloadedVersion { hold(serverVersion, checksum: local[index].digest) }
                return SyncedEntry(serverVersion: serverVersion, location: local[index].location)
            }
            // A duplicate is the empty changeset in the log as every client receives it: this record is
            // what the feed reads (it has no bytes), and the prefix digest counts it empty, as the server's.
            if serverVersion > downloadedVersion { hold(serverVersion, checksum: CRC32.checksum([])) }
            return SyncedEntry(serverVersion: serverVersion, location: location)
        case .downloaded(let serverVersion, let data):
            if serverVersion > downloadedVersion { hold(serverVersion, checksum: bodyChecksum ?? CRC32.checksum(data)) }
            downloadedBytes += data.count
            return SyncedEntry(serverVersion: serverVersion, location: location)
        }
    }
}

extension Index {
    /// Holds `serverVersion` (above `downloadedVersion`), whose changeset's CRC-32 is `checksum`: the prefix
    /// digest goes on from D(`downloadedVersion`) (D(0) = 0). After a gap (never made) it is unknown.
    fileprivate mutating func hold(_ serverVersion: UInt64, checksum: UInt32) {
        if serverVersion == downloadedVersion + 1, let previous = downloadedVersion == 0 ? 0 : downloadedDigest {
            downloadedDigest = CRC32.prefixDigest(after: previous, checksum: checksum)
        } else {
            downloadedDigest = nil
        }
        downloadedVersion = serverVersion
    }
}

/// Builds a store's index from its records as `StoreFile.open` visits them, on the file's queue.
private final class IndexBuilder: @unchecked Sendable {
    // @unchecked Sendable: `add` runs only on the store file's serial queue while `open` awaits it, and
    // `index` is read by the opener only after that await returned (the continuation orders the accesses).
    let path: String
    var index = Index(clientFileID: nil, local: [])
    /// The synced changesets found, in server-version order (they go to the changeset feed, not the store).
    var synced: [SyncedEntry] = []
    /// The first record that is not what a store holds: the open fails with it.
    var failure: SyncError?
    private var isFirst = true

    init(path: String) { self.path = path }

    /// Counts the record `bytes` at `location`; `checksum` (its record's, checked by the scan) gives a
    /// changeset's CRC-32 without reading its bytes a second time (a local changeset's digest, and the prefix
    /// digest's link for a downloaded one).
    func add(_ location: RecordLocation, _ bytes: [UInt8], checksum: RecordChecksum) {
        guard failure == nil else { return }
        let record: Record
        do {
            record = try Record(decoding: bytes)
        } catch {
            failure = .storeCorrupted(path: path, offset: location.offset)
            return
        }
        if isFirst {
            isFirst = false
            guard case .header(let id) = record else {
                failure = .storeCorrupted(path: path, offset: location.offset)
                return
            }
            index.clientFileID = id
            return
        }
        if case .header = record {
            failure = .storeCorrupted(path: path, offset: location.offset)
            return
        }
        let bodyChecksum: UInt32? =
            switch record {
            case .local, .downloaded:
                bytes.withUnsafeBytes { checksum.body(of: $0, afterPrefix: Record.changesetPrefixLength) }
            default: nil
            }
        if let entry = index.apply(record, at: location, bodyChecksum: bodyChecksum) { synced.append(entry) }
    }
}

/// One record of the local store's file.
enum Record: Equatable, Sendable {
    case header(clientFileID: UInt64)
    case local(clientVersion: UInt64, data: [UInt8])
    case acknowledged(serverVersion: UInt64, clientVersion: UInt64)
    case downloaded(serverVersion: UInt64, data: [UInt8])
    /// The identity of the server's log the store's server versions come from (`Download.historyID`).
    case history(id: UInt64)
    /// The session was fully synced at this time (`SyncStatus.lastSyncedAt`); the latest one counts.
    case synced(at: Date)
    /// A client reset that replaced an earlier store of this session (`ResetLineage`).
    case lineage(ResetLineage)
    /// Where the store a `clientExpired` reset replaced had got to in the log (`LocalStore.checkpoint`):
    /// the prefix digest there (`coversPrefix`, tag 10), or, written by an older engine, the CRC-32 of the one
    /// changeset there (tag 8).
    case checkpoint(serverVersion: UInt64, digest: UInt32, coversPrefix: Bool)
    /// The origin of the `.local` changeset `clientVersion` (written before it): a recovering client reset
    /// carried it over from a replaced store, where it was first written as `originClientVersion` of
    /// `originClientFileID` (`LocalStore.LocalEntry.origin`).
    case origin(clientVersion: UInt64, originClientFileID: UInt64, originClientVersion: UInt64)
    /// The server acknowledged this store's client version `clientVersion` with other bytes than the store's
    /// (`LocalStore.divergedAcknowledgement`): the store was copied or restored from a backup. Kept so that a
    /// client reset after a relaunch still recovers the store's own changesets from there.
    case diverged(clientVersion: UInt64)
    /// This client's changeset `clientVersion` was integrated as `serverVersion`, a duplicate of an earlier
    /// entry of the log (`Download.acknowledgedDuplicates`): acknowledged like `.acknowledged`, and delivered
    /// to the changesets feed as the empty changeset, as every other client receives it.
    case duplicateAcknowledged(serverVersion: UInt64, clientVersion: UInt64)

    func encoded() -> [UInt8] {
        var writer = ByteWriter()
        switch self {
        case .header(let id):
            writer.write(UInt8(1))
            writer.write(id)
        case .local(let clientVersion, let data):
            writer.write(UInt8(2))
            writer.write(clientVersion)
            writer.writeBytes(data)
        case .acknowledged(let serverVersion, let clientVersion):
            writer.write(UInt8(3))
            writer.write(serverVersion)
            writer.write(clientVersion)
        case .downloaded(let serverVersion, let data):
            writer.write(UInt8(4))
            writer.write(serverVersion)
            writer.writeBytes(data)
        case .history(let id):
            writer.write(UInt8(5))
            writer.write(id)
        case .synced(let date):
            writer.write(UInt8(6))
            writer.write(date.timeIntervalSince1970.bitPattern)
        case .lineage(let reset):
            writer.write(UInt8(7))
            writer.write(reset.replacedClientFileID)
            writer.write(reset.replacementClientFileID)
            writer.write(reset.lastIntegrated)
            writer.write(UInt8(reset.recovered ? 1 : 0))
            writer.write(reset.reason.rawValue)
        case .checkpoint(let serverVersion, let digest, let coversPrefix):
            // Tag 8: a one-changeset checkpoint (stores of protocol versions 6 and 7); 10: a prefix digest.
            writer.write(UInt8(coversPrefix ? 10 : 8))
            writer.write(serverVersion)
            writer.write(digest)
        case .origin(let clientVersion, let originClientFileID, let originClientVersion):
            writer.write(UInt8(9))
            writer.write(clientVersion)
            writer.write(originClientFileID)
            writer.write(originClientVersion)
        case .diverged(let clientVersion):
            writer.write(UInt8(11))
            writer.write(clientVersion)
        case .duplicateAcknowledged(let serverVersion, let clientVersion):
            writer.write(UInt8(12))
            writer.write(serverVersion)
            writer.write(clientVersion)
        }
        return writer.bytes
    }

    init(decoding bytes: [UInt8]) throws(WireError) {
        var reader = ByteReader(bytes)
        let tag = try reader.readUInt8()
        switch tag {
        case 1: self = .header(clientFileID: try reader.readUInt64())
        case 2: self = .local(clientVersion: try reader.readUInt64(), data: try reader.readBytes())
        case 3: self = .acknowledged(serverVersion: try reader.readUInt64(), clientVersion: try reader.readUInt64())
        case 4: self = .downloaded(serverVersion: try reader.readUInt64(), data: try reader.readBytes())
        case 5: self = .history(id: try reader.readUInt64())
        case 6: self = .synced(at: Date(timeIntervalSince1970: Double(bitPattern: try reader.readUInt64())))
        case 7:
            let replaced = try reader.readUInt64()
            let replacement = try reader.readUInt64()
            let lastIntegrated = try reader.readUInt64()
            let recovered = try reader.readUInt8()
            guard recovered <= 1, let reason = ClientResetReason(rawValue: try reader.readUInt8()) else {
                throw .invalidValue("a reset lineage record's flags")
            }
            self = .lineage(
                ResetLineage(
                    replacedClientFileID: replaced, replacementClientFileID: replacement,
                    lastIntegrated: lastIntegrated, recovered: recovered == 1, reason: reason))
        case 8, 10:
            self = .checkpoint(
                serverVersion: try reader.readUInt64(), digest: try reader.readUInt32(), coversPrefix: tag == 10)
        case 9:
            let clientVersion = try reader.readUInt64()
            let originClientFileID = try reader.readUInt64()
            self = .origin(
                clientVersion: clientVersion, originClientFileID: originClientFileID,
                originClientVersion: try reader.readUInt64())
        case 11: self = .diverged(clientVersion: try reader.readUInt64())
        case 12:
            self = .duplicateAcknowledged(
                serverVersion: try reader.readUInt64(), clientVersion: try reader.readUInt64())
        default: throw .unknownTag("local store record", tag)
        }
        try reader.expectEnd()
    }

    /// How many bytes come before the changeset in a `.local` or `.downloaded` record: the tag, the version
    /// and the changeset's length.
    static let changesetPrefixLength = 1 + 8 + 4

    /// The record as it is stored: for a changeset, its tag, version and length as the prefix and the
    /// changeset's bytes as the body (shared, not copied); otherwise the whole encoding as the prefix.
    var payload: RecordPayload {
        switch self {
        case .header, .acknowledged, .history, .synced, .lineage, .checkpoint, .origin, .diverged,
            .duplicateAcknowledged:
            return RecordPayload(prefix: encoded(), body: [])
        case .local(let version, let data), .downloaded(let version, let data):
            var writer = ByteWriter()
            writer.write(UInt8(self.isLocal ? 2 : 4))
            writer.write(version)
            writer.write(UInt32(data.count))
            return RecordPayload(prefix: writer.bytes, body: data)
        }
    }

    private var isLocal: Bool {
        if case .local = self { true } else { false }
    }

    /// Decodes a record read back in two parts (`StoreFile` splits after `changesetPrefixLength` bytes): a
    /// changeset record's body becomes its data without a copy.
    init(decoding payload: RecordPayload) throws(WireError) {
        guard payload.prefix.count == Self.changesetPrefixLength, payload.prefix[0] == 2 || payload.prefix[0] == 4
        else {
            self = try Record(decoding: payload.bytes)
            return
        }
        var reader = ByteReader(payload.prefix)
        let tag = try reader.readUInt8()
        let version = try reader.readUInt64()
        guard try reader.readUInt32() == payload.body.count else {
            throw .invalidValue("a changeset record's length does not match its bytes")
        }
        self =
            tag == 2
            ? .local(clientVersion: version, data: payload.body)
            : .downloaded(serverVersion: version, data: payload.body)
    }

    /// The changeset bytes of a `.local` or `.downloaded` record; none (the empty changeset) for a
    /// `.duplicateAcknowledged` one.
    var changesetData: [UInt8]? {
        switch self {
        case .local(_, let data), .downloaded(_, let data): data
        case .duplicateAcknowledged: []
        case .header, .acknowledged, .history, .synced, .lineage, .checkpoint, .origin, .diverged: nil
        }
    }
}
