import Foundation
import SyncServer
import SyncWire
import Testing

@Suite("API keys file", .timeLimit(.minutes(5)))
struct APIKeysFileTests {
    @Test("keys with exact names, prefixes and '*'; comments and blank lines ignored")
    func parses() throws {
        let keys = try APIKeysFile.parse(
            """
            # the team
            alice  tasks notes   # two partitions

            bob\tshared/*
            admin *
            """)
        #expect(keys == ["alice": ["tasks", "notes"], "bob": ["shared/*"], "admin": ["*"]])
    }

    @Test("a key without partitions and a repeated key are refused with their line")
    func refusals() {
        #expect(throws: APIKeysFile.Error.noPartitions(line: 2)) { try APIKeysFile.parse("a p\nlonely\n") }
        #expect(throws: APIKeysFile.Error.duplicateKey(line: 3)) { try APIKeysFile.parse("a p\n\na q") }
    }

    @Test("a missing file, a file that is not UTF-8 and an oversized file are typed errors")
    func fileErrors() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(throws: APIKeysFile.Error.self) {
            try APIKeysFile.load(path: directory.appendingPathComponent("none").path)
        }
        let binary = directory.appendingPathComponent("binary")
        try Data([0x61, 0x20, 0xFF, 0xFE]).write(to: binary)
        #expect(throws: APIKeysFile.Error.notUTF8) { try APIKeysFile.load(path: binary.path) }
        let huge = directory.appendingPathComponent("huge")
        try Data(repeating: 0x61, count: APIKeysFile.maximumSize + 1).write(to: huge)
        #expect(throws: APIKeysFile.Error.tooLarge(bytes: APIKeysFile.maximumSize + 1)) {
            try APIKeysFile.load(path: huge.path)
        }
        let good = directory.appendingPathComponent("good")
        try Data("k p*\n".utf8).write(to: good)
        #expect(try APIKeysFile.load(path: good.path) == ["k": ["p*"]])
    }

    @Test("a prefix pattern allows the partitions that start with it, and only those")
    func prefixPatterns() async throws {
        let server = try await SyncServer.embedded(
            configuration: .init(authentication: .apiKeys(try APIKeysFile.parse("k shared/* exact"))))
        let client = try await TestClient.welcomed(to: server, credential: .apiKey("k"))
        #expect(try await client.bind(1, partition: "shared/a", clientFileID: 1).count == 1)
        #expect(try await client.bind(2, partition: "exact", clientFileID: 1).count == 1)
        for (session, partition) in [(3, "shared"), (4, "exact2"), (5, "other")] {
            client.send(
                .bind(Bind(sessionID: UInt32(session), partition: partition, clientFileID: 1, downloadedVersion: 0)))
            #expect(try await client.nextError().code == .permissionDenied, "\(partition)")
        }
    }
}
