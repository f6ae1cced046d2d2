import Foundation
import SyncServer
import SyncWire
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 23, item 7: names and keys are exact.
@Suite("Exact names and keys", .timeLimit(.minutes(5)))
struct ExactNamesTests {
    @Test("a keys file with CRLF line endings is read line by line (later keys do not become patterns of the first)")
    func crlf() throws {
        let keys = try APIKeysFile.parse("alice tasks\r\nbob *\r\n# note\r\ncarol notes\r\n")
        #expect(keys == ["alice": ["tasks"], "bob": ["*"], "carol": ["notes"]])
    }

    @Test("a byte-order mark at the start of the keys file is not part of the first key")
    func byteOrderMark() throws {
        let keys = try APIKeysFile.parse("\u{FEFF}alice tasks\n")
        #expect(keys == ["alice": ["tasks"]])
    }

    @Test("a keys file readable by others gets a warning; one readable by its owner only does not")
    func permissionsWarning() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("keys-\(UUID().uuidString)").path
        try "alice tasks\n".write(toFile: path, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        chmod(path, 0o644)
        #expect(APIKeysFile.warnings(path: path).count == 1)
        chmod(path, 0o600)
        #expect(APIKeysFile.warnings(path: path).isEmpty)
    }

    @Test("an API key matches byte for byte: the NFD spelling of an NFC key is refused")
    func keysAreExact() async throws {
        let nfc = "caf\u{E9}-key"
        let nfd = "cafe\u{301}-key"
        #expect(nfc == nfd)  // Swift's String equality folds the two
        let server = try await SyncServer.embedded(configuration: .init(authentication: .apiKeys([nfc: ["*"]])))
        for (key, welcomed) in [(nfc, true), (nfd, false)] {
            let connection = InMemoryTransport().connect(to: server.endpoint)
            var events = connection.events.makeAsyncIterator()
            #expect(await events.next() == .opened)
            connection.send(.hello(Hello(credential: .apiKey(key))))
            let answer = await events.next()
            #expect(
                (answer
                    == .message(
                        .welcome(
                            protocolVersion: WireProtocol.version,
                            maximumMessageBytes: UInt32(WireProtocol.maximumMessageSize)))) == welcomed,
                "\(key.utf8.count) bytes: \(String(describing: answer))")
            connection.close()
        }
        await server.stop()
    }

    @Test("sync-server: its data directory is 0700 and its files 0600; a keys file readable by all gets a warning")
    func dataPermissions() async throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("perm-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: base) }
        let keys = base.appendingPathComponent("keys").path
        try "k1 *\n".write(toFile: keys, atomically: false, encoding: .utf8)
        chmod(keys, 0o644)
        let data = base.appendingPathComponent("data").path
        let server = try ChildProcess(syncServer: ["--port", "0", "--data", data, "--api-keys", keys])
        let port = try await server.port()
        let connection = WebSocketTransport().connect(to: .webSocket(host: "127.0.0.1", port: port))
        var events = connection.events.makeAsyncIterator()
        #expect(await events.next() == .opened)
        connection.send(.hello(Hello(credential: .apiKey("k1"))))
        #expect(
            await events.next()
                == .message(
                    .welcome(
                        protocolVersion: WireProtocol.version,
                        maximumMessageBytes: UInt32(WireProtocol.maximumMessageSize))))
        connection.send(.bind(Bind(sessionID: 1, partition: "p", clientFileID: 1, downloadedVersion: 0)))
        _ = await events.next()
        connection.send(
            .upload(Upload(sessionID: 1, changesets: [UploadChangeset(clientVersion: 1, data: [1, 2, 3])])))
        _ = await events.next()  // acknowledged: stored
        connection.close()
        #expect(try await server.stop(SIGTERM) == 0)
        #expect(server.stderr.contains("can be read by every user"), "\(server.stderr)")

        func mode(_ path: String) -> mode_t {
            var status = stat()
            return stat(path, &status) == 0 ? status.st_mode & 0o777 : 0o7777
        }
        #expect(mode(data) == 0o700, "\(String(mode(data), radix: 8))")
        let files = try FileManager.default.subpathsOfDirectory(atPath: data)
        #expect(!files.isEmpty)
        for file in files {
            let path = data + "/" + file
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
            #expect(mode(path) == (isDirectory.boolValue ? 0o700 : 0o600), "\(file): \(String(mode(path), radix: 8))")
        }
    }
}
