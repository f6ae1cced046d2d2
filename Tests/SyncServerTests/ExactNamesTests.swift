import Foundation
import SyncServer
import SyncStorage
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

    @Test(
        "a partition name is its exact bytes: NFC and NFD spellings of one name are two partitions, in memory and on disk, before and after a restart"
    )
    func partitionNamesAreExact() async throws {
        let nfc = "caf\u{E9}"
        let nfd = "cafe\u{301}"
        #expect(nfc == nfd)  // Swift's String equality folds the two
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("names-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let store = try FilePartitionStore(directory: directory)
            let server = try await SyncServer.embedded(configuration: .init(store: store))
            let a = try await TestClient.welcomed(to: server)
            #expect(try await a.bind(partition: nfc, clientFileID: 1).flatMap(\.entries).isEmpty)
            a.upload(from: 1, [[1]])
            #expect(try await a.nextDownload().entries == [.acknowledged(serverVersion: 1, clientVersion: 1)])
            let b = try await TestClient.welcomed(to: server)
            // The NFD spelling is another partition: nothing of the NFC one's log reaches it.
            #expect(try await b.bind(partition: nfd, clientFileID: 2).flatMap(\.entries).isEmpty)
            b.upload(from: 1, [[2]])
            #expect(try await b.nextDownload().entries == [.acknowledged(serverVersion: 1, clientVersion: 1)])
            try await a.expectNothingPending()  // b's changeset did not cross to a
            #expect(try await server.changesets(in: nfc).map(\.data) == [[1]])
            #expect(try await server.changesets(in: nfd).map(\.data) == [[2]])
            a.close()
            b.close()
            await server.stop()
            await store.close()
        }
        // On disk: one log per spelling.
        for name in [nfc, nfd] {
            let path = directory + "/" + StoreFileName.forPartition(name, suffix: ".log")
            #expect(FileManager.default.fileExists(atPath: path), "\(Array(name.utf8))")
        }
        // After a restart: the same two logs, each under its own spelling.
        let store = try FilePartitionStore(directory: directory)
        let server = try await SyncServer.embedded(configuration: .init(store: store))
        #expect(try await server.changesets(in: nfd).map(\.data) == [[2]])
        #expect(try await server.changesets(in: nfc).map(\.data) == [[1]])
        let c = try await TestClient.welcomed(to: server)
        #expect(
            try await c.bind(partition: nfc, clientFileID: 3).flatMap(\.entries)
                == [.changeset(serverVersion: 1, data: [1])])
        #expect(
            try await c.bind(2, partition: nfd, clientFileID: 4).flatMap(\.entries)
                == [.changeset(serverVersion: 1, data: [2])])
        c.close()
        await server.stop()
        await store.close()
    }

    @Test("a key's partition patterns match byte for byte: a name or prefix in NFC does not grant its NFD spelling")
    func accessIsExact() async throws {
        let nfc = "caf\u{E9}"
        let nfd = "cafe\u{301}"
        let server = try await SyncServer.embedded(
            configuration: .init(authentication: .apiKeys(["k": [nfc, "shared-\(nfc)*"]])))
        let client = try await TestClient.welcomed(to: server, credential: .apiKey("k"))
        for (sessionID, partition, allowed) in [
            (1, nfc, true), (2, nfd, false), (3, "shared-\(nfc)-1", true), (4, "shared-\(nfd)-1", false),
        ] as [(UInt32, String, Bool)] {
            if allowed {
                #expect(try await client.bind(sessionID, partition: partition, clientFileID: 1).count == 1)
            } else {
                client.send(
                    .bind(Bind(sessionID: sessionID, partition: partition, clientFileID: 1, downloadedVersion: 0)))
                let error = try await client.nextError()
                #expect(error.code == .permissionDenied, "\(Array(partition.utf8))")
                #expect(error.sessionID == sessionID)
            }
        }
        client.close()
        await server.stop()
    }

    @Test("the partition stores keep NFC and NFD spellings of one name apart")
    func storesKeepSpellingsApart() async throws {
        let nfc = "caf\u{E9}"
        let nfd = "cafe\u{301}"
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("names-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = try FilePartitionStore(directory: directory)
        let stores: [any PartitionStore] = [InMemoryPartitionStore(), file]
        for store in stores {
            _ = try await store.summaries(of: nfc)
            _ = try await store.summaries(of: nfd)
            try await store.append(
                [StoredChangeset(serverVersion: 1, clientFileID: 1, clientVersion: 1, data: [1])], to: nfc)
            try await store.append(
                [StoredChangeset(serverVersion: 1, clientFileID: 2, clientVersion: 1, data: [2])], to: nfd)
            #expect(try await store.summaries(of: nfc).map(\.clientFileID) == [1], "\(type(of: store))")
            #expect(try await store.summaries(of: nfd).map(\.clientFileID) == [2], "\(type(of: store))")
            #expect(try await store.read(1...1, of: nfd).map(\.data) == [[2]], "\(type(of: store))")
            #expect(try await store.historyID(of: nfc) != store.historyID(of: nfd), "\(type(of: store))")
        }
        await file.close()
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
        let connection = WebSocketTransport.forTests().connect(to: .webSocket(host: "127.0.0.1", port: port))
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
