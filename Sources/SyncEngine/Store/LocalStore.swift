import Foundation
import SyncStorage
import SyncWire

/// One session's durable local copy of its partition: what the user wrote, what the server acknowledged,
/// and what was downloaded — an append-only `RecordLog`, replayed when opened.
///
/// Each append is on disk (fsync) before the call returns, so a `write` that returned survives a crash; a
/// torn tail left by a crash is cut when the file is opened. Not thread-safe: its session's actor owns it.
final class LocalStore {
    /// A changeset written locally.
    struct LocalChangeset {
        let clientVersion: UInt64
        let data: [UInt8]
        /// Set once the server acknowledged it.
        var serverVersion: UInt64?
    }

    private let log: RecordLog
    /// Identifies this file to the server (random, chosen when the file was created).
    let clientFileID: UInt64
    /// Every local changeset, in client-version order (client version n is at index n − 1).
    private(set) var localChangesets: [LocalChangeset] = []
    /// Every changeset the server has ordered, own and others', in server-version order.
    private(set) var synced: [Changeset] = []
    /// Client versions up to this one are acknowledged.
    private(set) var acknowledgedClientVersion: UInt64 = 0
    /// The highest server version held (downloaded or acknowledged).
    private(set) var downloadedVersion: UInt64 = 0
    /// Bytes of local changesets, all and acknowledged.
    private(set) var uploadableBytes = 0
    private(set) var uploadedBytes = 0
    /// Bytes of other clients' changesets downloaded.
    private(set) var downloadedBytes = 0
    /// Bytes of torn tail cut when the file was opened.
    let truncatedBytes: Int

    /// Opens (or creates) the store at `path`.
    init(path: String, newClientFileID: () -> UInt64) throws(SyncError) {
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
            try append([.header(clientFileID: clientFileID)])
        } else {
            throw .storageFailure("\(path) does not start with a local store header")
        }
        for bytes in records {
            let record: Record
            do {
                record = try Record(decoding: bytes)
            } catch {
                throw .storageFailure("undecodable record in \(path): \(error)")
            }
            apply(record)
        }
    }

    /// The next client version to assign.
    var nextClientVersion: UInt64 { UInt64(localChangesets.count) + 1 }

    /// Local changesets the server has not acknowledged yet, in order.
    var unacknowledged: ArraySlice<LocalChangeset> { localChangesets[Int(acknowledgedClientVersion)...] }

    /// Durably records a new local changeset and returns its client version.
    func appendLocal(_ data: [UInt8]) throws(SyncError) -> UInt64 {
        let version = nextClientVersion
        try append([.local(clientVersion: version, data: data)])
        return version
    }

    /// Durably records a download's entries and returns the changesets they made known, in order.
    /// Entries at or below `downloadedVersion` (already held) are skipped.
    func appendDownload(_ entries: [DownloadEntry]) throws(SyncError) -> [Changeset] {
        var records: [Record] = []
        for entry in entries where entry.serverVersion > downloadedVersion {
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
        }
        if records.isEmpty { return [] }
        let before = synced.count
        try append(records)
        return Array(synced[before...])
    }

    func close() { log.close() }

    private func append(_ records: [Record]) throws(SyncError) {
        do {
            try log.append(records.map { $0.encoded() })
        } catch {
            throw .storageFailure("cannot write the local store: \(error)")
        }
        for record in records { apply(record) }
    }

    private func apply(_ record: Record) {
        switch record {
        case .header:
            break
        case .local(_, let data):
            localChangesets.append(LocalChangeset(clientVersion: nextClientVersion, data: data))
            uploadableBytes += data.count
        case .acknowledged(let serverVersion, let clientVersion):
            let index = Int(clientVersion) - 1
            guard localChangesets.indices.contains(index), localChangesets[index].serverVersion == nil else { return }
            localChangesets[index].serverVersion = serverVersion
            acknowledgedClientVersion = max(acknowledgedClientVersion, clientVersion)
            uploadedBytes += localChangesets[index].data.count
            downloadedVersion = max(downloadedVersion, serverVersion)
            synced.append(Changeset(data: Data(localChangesets[index].data), serverVersion: serverVersion))
        case .downloaded(let serverVersion, let data):
            downloadedVersion = max(downloadedVersion, serverVersion)
            downloadedBytes += data.count
            synced.append(Changeset(data: Data(data), serverVersion: serverVersion))
        }
    }
}

/// One record of the local store's file.
enum Record: Equatable {
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
