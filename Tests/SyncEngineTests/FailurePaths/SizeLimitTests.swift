import Foundation
import SyncServer
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

/// Changesets above the limit are refused before they are stored; everything below it syncs, however big
/// the backlog, in messages below the message limit.
@Suite("Size limits", .timeLimit(.minutes(5)))
struct SizeLimitTests {
    @Test(
        "a changeset above the limit is refused with a typed error before anything is stored; the session stays usable")
    func oversizedWriteIsRefused() async throws {
        let fixture = try await EngineFixture()
        defer { fixture.directory.remove() }
        let session = try await fixture.open()
        let limit = fixture.app.configuration.maximumChangesetBytes
        #expect(limit == WireProtocol.maximumChangesetSize)
        let path = fixture.directory.url.appendingPathComponent("anonymous/p.synclog").path
        let sizeBefore = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int

        await #expect(throws: SyncError.changesetTooLarge(bytes: limit + 1, limit: limit)) {
            try await session.write(Data(count: limit + 1))
        }
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int == sizeBefore)
        #expect(session.engine.notifier.current(.upload)?.transferrableBytes == 0)
        #expect(session.state.value == .active)

        try await session.write(Data("still fine".utf8))
        try await session.wait(for: .upload)
        #expect(try await fixture.serverLog() == [Array("still fine".utf8)])
        #expect(fixture.errors.values.isEmpty)
    }

    @Test("a smaller configured limit is honoured")
    func configuredLimit() async throws {
        let server = try await SyncServer.embedded()
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let app = SyncApp(
            configuration: .init(
                server: server.endpoint, directory: directory.url, timerExecutor: TestExecutor(),
                callbackExecutor: ImmediateExecutor(), maximumChangesetBytes: 10))
        let session = try await app.login(.anonymous).openSession(partition: "p")
        await #expect(throws: SyncError.changesetTooLarge(bytes: 11, limit: 10)) {
            try await session.write(Data(count: 11))
        }
        try await session.write(Data(count: 10))
        try await session.wait(for: .upload)
        #expect(try await server.changesets(in: "p").map(\.data.count) == [10])
    }

    @Test("the largest changeset allowed fits in one message with its framing, both ways")
    func largestChangesetSyncs() async throws {
        let server = try await SyncServer.embedded()
        let writerDirectory = TemporaryDirectory()
        let readerDirectory = TemporaryDirectory()
        defer {
            writerDirectory.remove()
            readerDirectory.remove()
        }
        let writerTransport = RecordingTransport()
        let readerTransport = RecordingTransport()
        let writer = try await makeApp(
            server: server.endpoint, directory: writerDirectory.url, transport: writerTransport
        )
        .login(.anonymous).openSession(partition: "p")
        let largest = Data((0..<WireProtocol.maximumChangesetSize).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try await writer.write(largest)
        try await writer.wait(for: .upload)

        let reader = try await makeApp(
            server: server.endpoint, directory: readerDirectory.url, transport: readerTransport
        )
        .login(.anonymous).openSession(partition: "p")
        try await reader.wait(for: .download)
        let received = Collected(reader.changesets)
        try await eventually("the reader has it") { received.values.count == 1 }
        #expect(received.values.first?.data == largest)
        #expect(writerTransport.largestMessage <= WireProtocol.maximumMessageSize)
        #expect(readerTransport.largestMessage <= WireProtocol.maximumMessageSize)
        #expect(readerTransport.largestMessage > WireProtocol.maximumChangesetSize)
    }

    @Test(
        "100 MiB written while suspended in 1 MiB changesets uploads after resume(), below the message limit, and another app receives all of it"
    )
    func bigBacklogSyncs() async throws {
        let server = try await SyncServer.embedded()
        let writerDirectory = TemporaryDirectory()
        let readerDirectory = TemporaryDirectory()
        defer {
            writerDirectory.remove()
            readerDirectory.remove()
        }
        let writerTransport = RecordingTransport()
        let readerTransport = RecordingTransport()
        let writer = try await makeApp(
            server: server.endpoint, directory: writerDirectory.url, transport: writerTransport
        )
        .login(.anonymous).openSession(partition: "p")
        writer.suspend()
        let changesetCount = 100
        var checksum = Checksum()
        for index in 0..<changesetCount {
            let changeset = Data(repeating: UInt8(truncatingIfNeeded: index), count: 1 << 20)
            checksum.add(changeset)
            try await writer.write(changeset)
        }
        #expect(try await server.changesets(in: "p").isEmpty)
        writer.resume()
        try await writer.wait(for: .upload)

        let reader = try await makeApp(
            server: server.endpoint, directory: readerDirectory.url, transport: readerTransport
        )
        .login(.anonymous).openSession(partition: "p")
        try await reader.wait(for: .download)
        #expect(reader.engine.notifier.current(.download)?.transferredBytes == changesetCount << 20)
        let received = Collected(reader.changesets)
        try await eventually("the reader replays all of it") { received.values.count == changesetCount }
        var readerChecksum = Checksum()
        for changeset in received.values { readerChecksum.add(changeset.data) }
        #expect(readerChecksum == checksum)
        #expect(received.values.map(\.serverVersion) == (1...UInt64(changesetCount)).map { $0 })

        // Several uploads and many downloads, none above the limit.
        let uploads = writerTransport.sent.filter { if case .upload = $0 { true } else { false } }
        #expect(uploads.count > 1)
        #expect(writerTransport.largestMessage <= WireProtocol.maximumMessageSize)
        #expect(readerTransport.largestMessage <= WireProtocol.maximumMessageSize)
    }
}

/// An order-sensitive checksum of byte strings (FNV-1a over each string's bytes and its length).
struct Checksum: Equatable {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325
    private(set) var count = 0

    mutating func add(_ data: Data) {
        for byte in data {
            value ^= UInt64(byte)
            value = value &* 0x0000_0100_0000_01b3
        }
        value ^= UInt64(data.count)
        value = value &* 0x0000_0100_0000_01b3
        count += 1
    }
}
