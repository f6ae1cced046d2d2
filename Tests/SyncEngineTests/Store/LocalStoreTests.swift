import Foundation
import SyncStorage
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

@Suite("Local store", .timeLimit(.minutes(5)))
struct LocalStoreTests {
    func withStorePath(_ body: (String) async throws -> Void) async rethrows {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try await body(directory.url.appendingPathComponent("p.synclog").path)
    }

    @Test("a new store gets a client file id that survives reopening")
    func clientFileID() async throws {
        try await withStorePath { path in
            let store = try await LocalStore.open(path: path, newClientFileID: { 42 }).store
            #expect(store.clientFileID == 42)
            await store.file.close()
            let reopened = try await LocalStore.open(path: path, newClientFileID: { 7 }).store
            #expect(reopened.clientFileID == 42)
        }
    }

    @Test("local writes, acknowledgements and downloads are replayed on reopen")
    func replay() async throws {
        try await withStorePath { path in
            let store = try await LocalStore.open(path: path, newClientFileID: { 1 }).store
            #expect(try await store.appendLocal([1, 2, 3]) == 1)
            #expect(try await store.appendLocal([4]) == 2)
            let synced = try await store.appendDownload([
                .changeset(serverVersion: 1, data: [9, 9]),
                .acknowledged(serverVersion: 2, clientVersion: 1),
            ])
            #expect(
                try await store.changesets(synced) == [
                    Changeset(data: Data([9, 9]), serverVersion: 1),
                    Changeset(data: Data([1, 2, 3]), serverVersion: 2),
                ])
            await store.file.close()

            let (reopened, reopenedSynced, _) = try await LocalStore.open(path: path, newClientFileID: { 2 })
            #expect(reopenedSynced == synced)
            #expect(reopened.unacknowledged(from: 1).count == 1)
            #expect(try await reopened.unacknowledgedData() == [[4]])
            #expect(reopened.uploadableBytes == 4 && reopened.uploadedBytes == 3)
            #expect(reopened.downloadedBytes == 2)
            #expect(reopened.downloadedVersion == 2)
            #expect(reopened.reservedClientVersion == 2)
        }
    }

    /// The prefix digest of `changesets` held at versions 1, 2, ….
    func prefix(_ changesets: [[UInt8]]) -> UInt32 {
        changesets.reduce(0) { CRC32.prefixDigest(after: $0, checksum: CRC32.checksum($1)) }
    }

    @Test("the prefix digest chains the CRC-32s: D(n) = CRC-32(D(n − 1) LE ‖ CRC-32(changeset n) LE), D(0) = 0")
    func prefixDigestChain() {
        let first = CRC32.checksum([9, 9])
        let one = CRC32.prefixDigest(after: 0, checksum: first)
        #expect(one == CRC32.checksum([0, 0, 0, 0] + withUnsafeBytes(of: first.littleEndian) { Array($0) }))
        let two = CRC32.prefixDigest(after: one, checksum: CRC32.checksum([8]))
        #expect(prefix([[9, 9], [8]]) == two)
        // A change at version 1 changes D(2) though version 2 is the same.
        #expect(prefix([[9, 8], [8]]) != two)
    }

    @Test(
        "the digest named in a bind is the prefix digest of every changeset held up to the downloaded version, downloaded or own, live and after reopening"
    )
    func downloadedDigest() async throws {
        try await withStorePath { path in
            let store = try await LocalStore.open(path: path, newClientFileID: { 1 }).store
            #expect(store.downloadedDigest == nil)
            #expect(try await store.appendLocal([1, 2, 3]) == 1)
            _ = try await store.appendDownload([
                .changeset(serverVersion: 1, data: [9, 9]), .changeset(serverVersion: 2, data: [8]),
            ])
            #expect(store.downloadedDigest == prefix([[9, 9], [8]]))
            await store.file.close()
            let reopened = try await LocalStore.open(path: path, newClientFileID: { 2 }).store
            #expect(reopened.downloadedVersion == 2)
            #expect(reopened.downloadedDigest == prefix([[9, 9], [8]]))
            _ = try await reopened.appendDownload([.acknowledged(serverVersion: 3, clientVersion: 1)])
            #expect(reopened.downloadedDigest == prefix([[9, 9], [8], [1, 2, 3]]))
            await reopened.file.close()
            let again = try await LocalStore.open(path: path, newClientFileID: { 3 }).store
            #expect(again.downloadedDigest == prefix([[9, 9], [8], [1, 2, 3]]))
            _ = try await again.appendDownload([.changeset(serverVersion: 4, data: [7, 7, 7])])
            await again.file.close()
            let last = try await LocalStore.open(path: path, newClientFileID: { 4 }).store
            let held = prefix([[9, 9], [8], [1, 2, 3], [7, 7, 7]])
            #expect(last.downloadedDigest == held)
            #expect(last.checkpoint == LogCheckpoint(serverVersion: 4, digest: held, coversPrefix: true))
            await last.file.close()
        }
    }

    @Test(
        "a store made by a clientExpired reset names the replaced store's history id and checkpoint (durably) until it has downloaded that far, then its own prefix digest, chained from version 1 (it downloads the log again)"
    )
    func checkpointCarriedOver() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let oldPath = directory.url.appendingPathComponent("old.synclog").path
        let newPath = directory.url.appendingPathComponent("new.synclog").path
        let old = try await LocalStore.open(path: oldPath, newClientFileID: { 1 }).store
        let records = try old.records(
            for: [.changeset(serverVersion: 1, data: [1]), .changeset(serverVersion: 2, data: [2])], historyID: 77)
        _ = old.apply(records, at: try await old.file.append(records.map(\.payload)))
        let carried = LogCheckpoint(serverVersion: 2, digest: prefix([[1], [2]]), coversPrefix: true)
        #expect(old.checkpoint == carried)
        let new = try await LocalStore.open(path: newPath, newClientFileID: { 2 }).store
        let continuing = new.recordsContinuing(old)
        _ = new.apply(continuing, at: try await new.file.append(continuing.map(\.payload)))
        #expect(new.downloadedVersion == 0)
        #expect(new.historyID == 77)
        #expect(new.checkpoint == carried)
        await new.file.close()
        let reopened = try await LocalStore.open(path: newPath, newClientFileID: { 3 }).store
        #expect(reopened.historyID == 77)
        #expect(reopened.checkpoint == carried)
        _ = try await reopened.appendDownload([.changeset(serverVersion: 1, data: [1])])
        #expect(reopened.checkpoint == carried, "not downloaded that far yet")
        _ = try await reopened.appendDownload([
            .changeset(serverVersion: 2, data: [2]), .changeset(serverVersion: 3, data: [3]),
        ])
        #expect(
            reopened.checkpoint == LogCheckpoint(serverVersion: 3, digest: prefix([[1], [2], [3]]), coversPrefix: true))
        await reopened.file.close()
        await old.file.close()
    }

    @Test(
        "a carried checkpoint keeps its kind: one an older engine wrote (tag 8, one changeset's CRC-32) is named as such, a prefix one as a prefix"
    )
    func carriedCheckpointKinds() throws {
        for coversPrefix in [false, true] {
            let record = Record.checkpoint(serverVersion: 5, digest: 0xA1B2_C3D4, coversPrefix: coversPrefix)
            let encoded = record.encoded()
            #expect(encoded.first == (coversPrefix ? 10 : 8))
            #expect(try Record(decoding: encoded) == record)
            var index = Index(clientFileID: 1, local: [])
            _ = index.apply(record, at: RecordLocation(offset: 0, length: 0))
            #expect(
                index.checkpoint == LogCheckpoint(serverVersion: 5, digest: 0xA1B2_C3D4, coversPrefix: coversPrefix))
        }
    }

    @Test(
        "a recovered changeset's origin is durable (an .origin record after its .local one); a changeset written here is its own origin"
    )
    func recoveredOrigin() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.url.appendingPathComponent("store.synclog").path
        let store = try await LocalStore.open(path: path, newClientFileID: { 5 }).store
        let origin = ChangesetOrigin(clientFileID: 3, clientVersion: 9)
        let records = store.recordsRecovered([1], origin: origin) + [store.recordLocal([2])]
        _ = store.apply(records, at: try await store.file.append(records.map(\.payload)))
        #expect(store.origin(of: 1) == origin)
        #expect(store.origin(of: 2) == ChangesetOrigin(clientFileID: 5, clientVersion: 2))
        await store.file.close()
        let reopened = try await LocalStore.open(path: path, newClientFileID: { 6 }).store
        #expect(reopened.local.map(\.origin) == [origin, nil])
        #expect(reopened.origin(of: 1) == origin)
        await reopened.file.close()
    }

    @Test("entries already held are skipped: nothing is stored twice")
    func duplicatesSkipped() async throws {
        try await withStorePath { path in
            let store = try await LocalStore.open(path: path, newClientFileID: { 1 }).store
            _ = try await store.appendDownload([.changeset(serverVersion: 1, data: [1])])
            #expect(try await store.appendDownload([.changeset(serverVersion: 1, data: [1])]).isEmpty)
            #expect(store.downloadedBytes == 1)
        }
    }

    @Test("records count only once applied; versions are reserved when the records are made")
    func reserveThenApply() async throws {
        try await withStorePath { path in
            let store = try await LocalStore.open(path: path, newClientFileID: { 1 }).store
            let first = store.recordLocal([1])
            let second = store.recordLocal([2, 2])
            #expect(first == .local(clientVersion: 1, data: [1]))
            #expect(second == .local(clientVersion: 2, data: [2, 2]))
            #expect(store.uploadableBytes == 0 && store.unacknowledged(from: 1).isEmpty)
            let locations = try await store.file.append([first, second].map(\.payload))
            _ = store.apply([first, second], at: locations)
            #expect(store.uploadableBytes == 3 && store.unacknowledged(from: 1).count == 2)
            // A download on its way is not asked for again, even before it is applied.
            let pending = try store.records(for: [.changeset(serverVersion: 1, data: [7])])
            #expect(try store.records(for: [.changeset(serverVersion: 1, data: [7])]).isEmpty)
            #expect(store.downloadedVersion == 0)
            let pendingLocations = try await store.file.append(pending.map(\.payload))
            let applied = store.apply(pending, at: pendingLocations)
            #expect(try await store.changesets(applied) == [Changeset(data: Data([7]), serverVersion: 1)])
            #expect(store.downloadedVersion == 1)
        }
    }

    @Test(
        "a local changeset's digest is its CRC-32 from the append's one checksum pass; it reads back after reopening")
    func digestFromTheAppend() async throws {
        try await withStorePath { path in
            let store = try await LocalStore.open(path: path, newClientFileID: { 1 }).store
            let data: [UInt8] = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            let record = store.recordLocal(data)
            let (locations, checksums) = try await store.file.appendChecksummed([record.payload])
            #expect(checksums == [CRC32.checksum(data)])
            _ = store.apply([record], at: locations, bodyChecksums: checksums)
            #expect(store.local.map(\.digest) == [CRC32.checksum(data)])
            await store.file.close()
            let reopened = try await LocalStore.open(path: path, newClientFileID: { 7 }).store
            #expect(reopened.local.map(\.digest) == [CRC32.checksum(data)])
            #expect(try await reopened.file.read(reopened.local.map(\.location)).map(\.body) == [data])
            await reopened.file.close()
        }
    }

    @Test("an acknowledgement of a client version never written is a fatal protocol violation")
    func bogusAcknowledgement() async throws {
        try await withStorePath { path in
            let store = try await LocalStore.open(path: path, newClientFileID: { 1 }).store
            #expect(
                throws: SyncError.protocolViolation(
                    "acknowledgement of client version 5; the next unacknowledged one written is none", isFatal: true)
            ) {
                try store.records(for: [.acknowledged(serverVersion: 1, clientVersion: 5)])
            }
        }
    }

    @Test("a torn tail left by a crash is cut; everything before it survives")
    func tornTail() async throws {
        try await withStorePath { path in
            let store = try await LocalStore.open(path: path, newClientFileID: { 1 }).store
            _ = try await store.appendLocal(Array(repeating: 7, count: 100))
            await store.file.close()
            let handle = try #require(FileHandle(forWritingAtPath: path))
            handle.seekToEndOfFile()
            handle.write(Data([50, 0, 0, 0, 1, 2]))  // a record header cut short by the crash
            handle.closeFile()

            let (reopened, _, discarded) = try await LocalStore.open(path: path, newClientFileID: { 2 })
            #expect(discarded == 6)
            #expect(try await reopened.unacknowledgedData() == [Array(repeating: 7, count: 100)])
            #expect(try await reopened.appendLocal([8]) == 2)
        }
    }

    @Test("a file that is not a local store is refused with a typed error")
    func notAStore() async {
        await withStorePath { path in
            #expect(FileManager.default.createFile(atPath: path, contents: Data("hello, world".utf8)))
            await #expect(throws: SyncError.self) { _ = try await LocalStore.open(path: path, newClientFileID: { 1 }) }
        }
    }

    @Test("records encode and decode; garbage is a typed error")
    func recordCodec() throws {
        let records: [Record] = [
            .header(clientFileID: .max), .local(clientVersion: 1, data: []), .local(clientVersion: 2, data: [1, 2]),
            .acknowledged(serverVersion: 3, clientVersion: 2), .downloaded(serverVersion: 4, data: [5]),
            .lineage(
                ResetLineage(
                    replacedClientFileID: 7, replacementClientFileID: .max, lastIntegrated: 3, recovered: true,
                    reason: .historyLost)),
            .origin(clientVersion: 2, originClientFileID: .max, originClientVersion: 9),
            .diverged(clientVersion: .max),
        ]
        for record in records {
            #expect(try Record(decoding: record.encoded()) == record)
            // Stored in two parts (a changeset's bytes not copied): the same bytes, decoded the same way.
            #expect(record.payload.bytes == record.encoded())
            #expect(try Record(decoding: record.payload) == record)
            let split = record.encoded()
            let at = min(Record.changesetPrefixLength, split.count)
            let readBack = RecordPayload(prefix: Array(split[..<at]), body: Array(split[at...]))
            #expect(try Record(decoding: readBack) == record)
        }
        // A changeset record whose length field disagrees with its bytes is refused.
        var bad = Record.local(clientVersion: 1, data: [1, 2]).payload
        bad.body.append(3)
        #expect(throws: WireError.self) { try Record(decoding: bad) }
        #expect(throws: WireError.self) { try Record(decoding: [99]) }
        #expect(throws: WireError.self) { try Record(decoding: [2, 1]) }
        #expect(throws: WireError.self) { try Record(decoding: records[1].encoded() + [0]) }
    }
}

extension LocalStore {
    /// Writes one local changeset the way the session does (record, make durable, apply); returns its
    /// client version.
    func appendLocal(_ data: [UInt8]) async throws -> UInt64 {
        let record = recordLocal(data)
        _ = apply([record], at: try await file.append([record.payload]))
        return reservedClientVersion
    }

    /// Stores a download's entries the way the session does; returns the changesets they made known.
    func appendDownload(_ entries: [DownloadEntry]) async throws -> [SyncedEntry] {
        let records = try records(for: entries)
        return apply(records, at: try await file.append(records.map(\.payload)))
    }

    /// The changesets of `entries`, read back from the file.
    func changesets(_ entries: [SyncedEntry]) async throws -> [Changeset] {
        try await file.read(entries.map(\.location)).enumerated().map { index, bytes in
            Changeset(
                data: Data(try Record(decoding: bytes).changesetData ?? []), serverVersion: entries[index].serverVersion
            )
        }
    }

    /// The bytes of the unacknowledged local changesets, read back from the file.
    func unacknowledgedData() async throws -> [[UInt8]] {
        try await file.read(unacknowledged(from: 1).map(\.location)).map {
            try Record(decoding: $0).changesetData ?? []
        }
    }
}
