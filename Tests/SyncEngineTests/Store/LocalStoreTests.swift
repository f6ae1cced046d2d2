import Foundation
import SyncStorage
import SyncWire
import Testing

@testable import SyncEngine

@Suite("Local store")
struct LocalStoreTests {
    func withStorePath(_ body: (String) throws -> Void) rethrows {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try body(directory.url.appendingPathComponent("p.synclog").path)
    }

    @Test("a new store gets a client file id that survives reopening")
    func clientFileID() throws {
        try withStorePath { path in
            let store = try LocalStore(path: path, newClientFileID: { 42 })
            #expect(store.clientFileID == 42)
            store.close()
            let reopened = try LocalStore(path: path, newClientFileID: { 7 })
            #expect(reopened.clientFileID == 42)
        }
    }

    @Test("local writes, acknowledgements and downloads are replayed on reopen")
    func replay() throws {
        try withStorePath { path in
            let store = try LocalStore(path: path, newClientFileID: { 1 })
            #expect(try store.appendLocal([1, 2, 3]) == 1)
            #expect(try store.appendLocal([4]) == 2)
            let synced = try store.appendDownload([
                .changeset(serverVersion: 1, data: [9, 9]),
                .acknowledged(serverVersion: 2, clientVersion: 1),
            ])
            #expect(
                synced == [
                    Changeset(data: Data([9, 9]), serverVersion: 1),
                    Changeset(data: Data([1, 2, 3]), serverVersion: 2),
                ])
            store.close()

            let reopened = try LocalStore(path: path, newClientFileID: { 2 })
            #expect(reopened.synced == synced)
            #expect(reopened.unacknowledged.map(\.clientVersion) == [2])
            #expect(reopened.uploadableBytes == 4 && reopened.uploadedBytes == 3)
            #expect(reopened.downloadedBytes == 2)
            #expect(reopened.downloadedVersion == 2)
            #expect(reopened.nextClientVersion == 3)
        }
    }

    @Test("entries already held are skipped: nothing is stored twice")
    func duplicatesSkipped() throws {
        try withStorePath { path in
            let store = try LocalStore(path: path, newClientFileID: { 1 })
            _ = try store.appendDownload([.changeset(serverVersion: 1, data: [1])])
            #expect(try store.appendDownload([.changeset(serverVersion: 1, data: [1])]).isEmpty)
            #expect(store.downloadedBytes == 1)
        }
    }

    @Test("an acknowledgement of a client version never written is a fatal protocol violation")
    func bogusAcknowledgement() throws {
        try withStorePath { path in
            let store = try LocalStore(path: path, newClientFileID: { 1 })
            #expect(throws: SyncError.protocolViolation("acknowledgement of unknown client version 5", isFatal: true)) {
                try store.appendDownload([.acknowledged(serverVersion: 1, clientVersion: 5)])
            }
        }
    }

    @Test("a torn tail left by a crash is cut; everything before it survives")
    func tornTail() throws {
        try withStorePath { path in
            let store = try LocalStore(path: path, newClientFileID: { 1 })
            _ = try store.appendLocal(Array(repeating: 7, count: 100))
            store.close()
            let handle = try #require(FileHandle(forWritingAtPath: path))
            handle.seekToEndOfFile()
            handle.write(Data([50, 0, 0, 0, 1, 2]))  // a record header cut short by the crash
            handle.closeFile()

            let reopened = try LocalStore(path: path, newClientFileID: { 2 })
            #expect(reopened.truncatedBytes == 6)
            #expect(reopened.unacknowledged.map(\.data) == [Array(repeating: 7, count: 100)])
            #expect(try reopened.appendLocal([8]) == 2)
        }
    }

    @Test("a file that is not a local store is refused with a typed error")
    func notAStore() {
        withStorePath { path in
            #expect(FileManager.default.createFile(atPath: path, contents: Data("hello, world".utf8)))
            #expect(throws: SyncError.self) { _ = try LocalStore(path: path, newClientFileID: { 1 }) }
        }
    }

    @Test("records encode and decode; garbage is a typed error")
    func recordCodec() throws {
        let records: [Record] = [
            .header(clientFileID: .max), .local(clientVersion: 1, data: []), .local(clientVersion: 2, data: [1, 2]),
            .acknowledged(serverVersion: 3, clientVersion: 2), .downloaded(serverVersion: 4, data: [5]),
        ]
        for record in records { #expect(try Record(decoding: record.encoded()) == record) }
        #expect(throws: WireError.self) { try Record(decoding: [99]) }
        #expect(throws: WireError.self) { try Record(decoding: [2, 1]) }
        #expect(throws: WireError.self) { try Record(decoding: records[1].encoded() + [0]) }
    }
}
