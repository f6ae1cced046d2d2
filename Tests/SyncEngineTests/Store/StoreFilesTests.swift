import Foundation
import SyncServer
import SyncStorage
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

/// The local stores as files on disk, through the engine: one file per partition (names that differ only
/// in case included), damage refused without touching the file, and a slow file system that delays only
/// the session whose file it is.
@Suite("Store files", .timeLimit(.minutes(5)))
struct StoreFilesTests {
    @Test("sessions \"Tasks\" and \"tasks\" keep separate data, in separate files")
    func caseDistinctPartitions() async throws {
        let fixture = try await EngineFixture()
        defer { fixture.directory.remove() }
        let user = try await fixture.app.login(.anonymous)
        let upper = try await user.openSession(partition: "Tasks")
        let lower = try await user.openSession(partition: "tasks")
        #expect(upper !== lower)
        try await upper.write(Data("upper".utf8))
        try await lower.write(Data("lower".utf8))
        try await upper.wait(for: .upload)
        try await lower.wait(for: .upload)
        #expect(try await fixture.serverLog("Tasks") == [Array("upper".utf8)])
        #expect(try await fixture.serverLog("tasks") == [Array("lower".utf8)])
        try await fixture.app.close()

        let files = try FileManager.default.contentsOfDirectory(
            atPath: fixture.directory.url.appendingPathComponent("anonymous").path
        ).filter { $0.hasSuffix(".synclog") }
        #expect(files.count == 2, "\(files)")
        #expect(Set(files.map { $0.lowercased() }).count == 2, "names that differ only in case: \(files)")

        // Reopened from disk (offline), each holds its own changeset only.
        let refusing = FaultInjectingTransport()
        refusing.faults.refuse = true
        let app = makeApp(server: fixture.server.endpoint, directory: fixture.directory.url, transport: refusing)
        let reopened = try await app.login(.anonymous)
        let upperSeen = Collected(try await reopened.openSession(partition: "Tasks").changesets)
        let lowerSeen = Collected(try await reopened.openSession(partition: "tasks").changesets)
        #expect(upperSeen.values.map(\.data) == [Data("upper".utf8)])
        #expect(lowerSeen.values.map(\.data) == [Data("lower".utf8)])
        try await app.close()
    }

    /// Where the damage goes: which record gets a flipped bit.
    enum Damage: String, CaseIterable, CustomTestStringConvertible {
        /// The header record (the client file id), with intact records after it.
        case header
        /// The second of three local changesets.
        case middle
        var testDescription: String { rawValue }
    }

    @Test(
        "a store damaged before intact records is refused with storeCorrupted at the damage; nothing is cut or rewritten",
        arguments: Damage.allCases)
    func damagedStoreIsRefused(damage: Damage) async throws {
        let server = try await SyncServer.embedded()
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let refusing = FaultInjectingTransport()
        refusing.faults.refuse = true
        do {
            let app = makeApp(server: server.endpoint, directory: directory.url, transport: refusing)
            let session = try await app.login(.anonymous).openSession(partition: "p")
            for word in ["one", "two", "three"] { try await session.write(Data(word.utf8)) }
            try await app.close()
        }
        let path = directory.url.appendingPathComponent("anonymous/p.synclog").path
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let offsets = recordOffsets(bytes)
        #expect(offsets.count == 4)  // the header record and three local changesets
        let damaged = damage == .header ? offsets[0] : offsets[2]
        bytes[damaged + RecordFormat.recordHeaderSize + 1] ^= 0x10  // a bit of the payload
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        let app = makeApp(server: server.endpoint, directory: directory.url, transport: refusing)
        let user = try await app.login(.anonymous)
        for _ in 0..<2 {  // and again: refused the same way, never "repaired" into a new store
            await #expect(throws: SyncError.storeCorrupted(path: path, offset: UInt64(damaged))) {
                _ = try await user.openSession(partition: "p")
            }
        }
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))) == bytes)
        #expect(user.allSessions.isEmpty)
        try await app.close()
    }

    @Test("a store whose first record is not a header is refused; no new client file id is written")
    func missingHeaderIsRefused() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.url.appendingPathComponent("anonymous/p.synclog").path
        try FileManager.default.createDirectory(
            at: directory.url.appendingPathComponent("anonymous"), withIntermediateDirectories: true)
        do {
            let log = try RecordLog(path: path)
            try log.append(Record.local(clientVersion: 1, data: Array("orphan".utf8)).encoded())
            log.close()
        }
        let before = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let server = try await SyncServer.embedded()
        let app = makeApp(server: server.endpoint, directory: directory.url)
        await #expect(throws: SyncError.storeCorrupted(path: path, offset: UInt64(RecordFormat.fileHeaderSize))) {
            _ = try await app.login(.anonymous).openSession(partition: "p")
        }
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))) == before)
        try await app.close()
    }

    @Test(
        "stores whose open blocks in the file system delay no other session: another opens and syncs, allSessions answers"
    )
    func blockedOpenDelaysNobody() async throws {
        let fileSystem = ControlledFileSystem()
        let fixture = try await EngineFixture(fileSystem: fileSystem)
        defer { fixture.directory.remove() }
        let user = try await fixture.app.login(.anonymous)
        // More blocked opens than the cooperative pool has threads: opening on the pool would starve it.
        let blockedNames = (0...ProcessInfo.processInfo.activeProcessorCount).map { "blocked\($0)" }
        let gates = blockedNames.map { fileSystem.hold(.open, of: "\($0).synclog") }
        defer { for gate in gates { gate.release() } }
        let opening = blockedNames.map { name in Task { try await user.openSession(partition: name) } }
        try await eventually("every blocked open waits in the file system") { gates.allSatisfy(\.isBlocked) }

        let freeOpening = Task { try await user.openSession(partition: "free") }
        try await eventually("the free session opened") { user.allSessions.count == 1 }
        let free = try await freeOpening.value
        #expect(user.allSessions == [free])
        try await free.write(Data("while the others wait".utf8))
        try await free.wait(for: .upload)
        #expect(try await fixture.serverLog("free") == [Array("while the others wait".utf8)])
        #expect(gates.allSatisfy { $0.isBlocked })

        for gate in gates { gate.release() }
        var opened: [SyncSession] = []
        for task in opening { opened.append(try await task.value) }
        #expect(Set(user.allSessions) == Set([free] + opened))
        try await fixture.app.close()
    }
}

/// The offsets of the records of a record log file's bytes (format 3: a 16-byte file header, then records
/// of a 22-byte header — marker, flags, u32 LE length, batch, checksums — and the payload).
func recordOffsets(_ bytes: [UInt8]) -> [Int] {
    var offsets: [Int] = []
    var offset = RecordFormat.fileHeaderSize
    while offset + RecordFormat.recordHeaderSize <= bytes.count {
        offsets.append(offset)
        let length = (2...5).reduce(0) { $0 | Int(bytes[offset + $1]) << (8 * ($1 - 2)) }
        offset += RecordFormat.recordHeaderSize + length
    }
    return offsets
}
