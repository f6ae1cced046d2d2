import Foundation
import SyncStorage
import SyncWire

/// One session's durable local copy of its partition: what the user wrote, what the server acknowledged,
/// and what was downloaded — an append-only `RecordLog`, replayed when opened.
///
/// Writing is in two steps, so that writes issued together share one fsync (group commit): records are
/// first made (`recordLocal`, `records(for:)`), which reserves their client and server versions; the
/// owner makes them durable through `file` (an actor, so the disk work runs off the owner's actor) and
/// then `apply`s them, which is when they count (acknowledged bytes, synced changesets, progress). A torn
/// tail left by a crash is cut when the file is opened. Not thread-safe: its session's actor owns it.
final class LocalStore {
    /// A changeset written locally.
    struct LocalChangeset {
        let clientVersion: UInt64
        let data: [UInt8]
        /// Set once the server acknowledged it.
        var serverVersion: UInt64?
    }

    /// The file, behind its own actor.
    let file: StoreFile
    /// Identifies this file to the server (random, chosen when the file was created).
    let clientFileID: UInt64
    /// Every durable local changeset, in client-version order (client version n is at index n − 1).
    private(set) var localChangesets: [LocalChangeset] = []
    /// Every changeset the server has ordered, own and others', in server-version order.
    private(set) var synced: [Changeset] = []
    /// Client versions up to this one are acknowledged.
    private(set) var acknowledgedClientVersion: UInt64 = 0
    /// The highest server version held (downloaded or acknowledged) in the file.
    private(set) var downloadedVersion: UInt64 = 0
    /// The highest client version assigned, durable or not yet.
    private(set) var reservedClientVersion: UInt64 = 0
    /// The highest server version held or on its way to the file.
    private(set) var reservedDownloadedVersion: UInt64 = 0
    /// Bytes of local changesets, all and acknowledged.
    private(set) var uploadableBytes = 0
    private(set) var uploadedBytes = 0
    /// Bytes of other clients' changesets downloaded.
    private(set) var downloadedBytes = 0
    /// Bytes of torn tail cut when the file was opened.
    let truncatedBytes: Int

    /// Opens (or creates) the store at `path`.
    init(path: String, newClientFileID: () -> UInt64) throws(SyncError) {
        let log: RecordLog
        do {
            log = try RecordLog(path: path)
        } catch {
            throw .storageFailure("cannot open \(path): \(error)")
        }
        truncatedBytes = log.truncatedBytes
        var records = log.recoveredRecords[...]
        if let first = records.first, case .header(let id)? = try? Record(decoding: first) {
            clientFileID = id
            records = records.dropFirst()
        } else if records.isEmpty {
            clientFileID = newClientFileID()
            do {
                try log.append(Record.header(clientFileID: clientFileID).encoded())
            } catch {
                throw .storageFailure("cannot write the local store \(path): \(error)")
            }
        } else {
            throw .storageFailure("\(path) does not start with a local store header")
        }
        var decoded: [Record] = []
        for bytes in records {
            do {
                decoded.append(try Record(decoding: bytes))
            } catch {
                throw .storageFailure("undecodable record in \(path): \(error)")
            }
        }
        file = StoreFile(log)
        _ = apply(decoded)
        reservedClientVersion = UInt64(localChangesets.count)
        reservedDownloadedVersion = downloadedVersion
    }

    /// Durable local changesets the server has not acknowledged yet, in order.
    var unacknowledged: ArraySlice<LocalChangeset> { localChangesets[Int(acknowledgedClientVersion)...] }

    /// The record of a new local changeset, with the next client version.
    func recordLocal(_ data: [UInt8]) -> Record {
        reservedClientVersion += 1
        return .local(clientVersion: reservedClientVersion, data: data)
    }

    /// The records of a download's entries. Entries at or below the highest server version held or on its
    /// way (a download sent again after a reconnect) are skipped.
    func records(for entries: [DownloadEntry]) throws(SyncError) -> [Record] {
        var records: [Record] = []
        for entry in entries where entry.serverVersion > reservedDownloadedVersion {
            switch entry {
            case .changeset(let serverVersion, let data):
                records.append(.downloaded(serverVersion: serverVersion, data: data))
            case .acknowledged(let serverVersion, let clientVersion):
                guard clientVersion >= 1, clientVersion <= UInt64(localChangesets.count) else {
                    throw .protocolViolation(
                        "acknowledgement of unknown client version \(clientVersion)", isFatal: true)
                }
                records.append(.acknowledged(serverVersion: serverVersion, clientVersion: clientVersion))
            }
            reservedDownloadedVersion = entry.serverVersion
        }
        return records
    }

    /// Counts durable records; returns the changesets they made known (synced), in order.
    func apply(_ records: [Record]) -> [Changeset] {
        records.compactMap { apply($0) }
    }

    private func apply(_ record: Record) -> Changeset? {
        switch record {
        case .header:
            return nil
        case .local(_, let data):
            localChangesets.append(
                LocalChangeset(clientVersion: UInt64(localChangesets.count) + 1, data: data, serverVersion: nil))
            uploadableBytes += data.count
            return nil
        case .acknowledged(let serverVersion, let clientVersion):
            let index = Int(clientVersion) - 1
            guard localChangesets.indices.contains(index), localChangesets[index].serverVersion == nil else {
                return nil
            }
            localChangesets[index].serverVersion = serverVersion
            acknowledgedClientVersion = max(acknowledgedClientVersion, clientVersion)
            uploadedBytes += localChangesets[index].data.count
            downloadedVersion = max(downloadedVersion, serverVersion)
            let changeset = Changeset(data: Data(localChangesets[index].data), serverVersion: serverVersion)
            synced.append(changeset)
            return changeset
        case .downloaded(let serverVersion, let data):
            downloadedVersion = max(downloadedVersion, serverVersion)
            downloadedBytes += data.count
            let changeset = Changeset(data: Data(data), serverVersion: serverVersion)
            synced.append(changeset)
            return changeset
        }
    }
}

/// The local store's file behind an actor: appends (encode, checksum, write, fsync) run here, off the
/// session's actor, which meanwhile gathers the next batch.
actor StoreFile {
    private let log: RecordLog

    init(_ log: sending RecordLog) { self.log = log }

    /// Appends `records` with one fsync; on failure nothing of them remains in the file.
    func append(_ records: [Record]) throws(SyncError) {
        guard !records.isEmpty else { return }
        do {
            try log.append(records.map { $0.encoded() })
        } catch {
            throw .storageFailure("cannot write the local store: \(error)")
        }
    }

    func close() { log.close() }
}

/// One record of the local store's file.
enum Record: Equatable, Sendable {
    case header(clientFileID: UInt64)
    case local(clientVersion: UInt64, data: [UInt8])
    case acknowledged(serverVersion: UInt64, clientVersion: UInt64)
    case downloaded(serverVersion: UInt64, data: [UInt8])

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
        }
        return writer.bytes
    }

    init(decoding bytes: [UInt8]) throws(WireError) {
        var reader = ByteReader(bytes)
        switch try reader.readUInt8() {
        case 1: self = .header(clientFileID: try reader.readUInt64())
        case 2: self = .local(clientVersion: try reader.readUInt64(), data: try reader.readBytes())
        case 3: self = .acknowledged(serverVersion: try reader.readUInt64(), clientVersion: try reader.readUInt64())
        case 4: self = .downloaded(serverVersion: try reader.readUInt64(), data: try reader.readBytes())
        case let tag: throw .unknownTag("local store record", tag)
        }
        try reader.expectEnd()
    }
}
