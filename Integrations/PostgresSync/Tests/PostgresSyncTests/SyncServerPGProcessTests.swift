import Foundation
import PostgresSync
import SyncEngine
import SyncServer
import TestSupport
import Testing

/// `sync-server-pg`'s command line, without a database.
@Suite("sync-server-pg command line", .timeLimit(.minutes(10)))
struct SyncServerPGCommandLineTests {
    @Test(
        "bad usage exits 64 with the usage",
        arguments: [
            ["--database", "postgres://u@h/d"], ["--port", "0"], ["--port", "70000", "--database", "postgres://u@h/d"],
            ["--port", "0", "--database", "postgres://u@h/d", "--bogus"],
            ["--port", "0", "--database", "mysql://u@h/d"],
            ["--port", "0", "--database", "postgres://h/d"],
            ["--port", "0", "--database", "postgres://u@h/d?sslmode=x"],
            ["--port"],
            ["--port", "0", "--database", "postgres://u@h/d", "--max-connections", "0"],
            ["--port", "0", "--database", "postgres://u@h/d", "--idle-timeout", "5s"],
            ["--port", "0", "--database", "postgres://u@h/d", "--hello-timeout", "0s"],
            ["--port", "0", "--database", "postgres://u@h/d", "--max-partitions-on-disk", "0"],
        ])
    func usage(arguments: [String]) async throws {
        let server = try ChildProcess(syncServerPG: arguments)
        #expect(try await server.waitForExit() == 64)
        #expect(server.stderr.contains("usage: sync-server-pg"), "\(server.stderr)")
    }

    @Test("--help lists every option and exits 0")
    func help() async throws {
        let server = try ChildProcess(syncServerPG: ["--help"])
        #expect(try await server.waitForExit() == 0)
        for option in [
            "--port", "--database", "--host", "--api-keys", "--max-message-bytes", "--log-level", "--max-connections",
            "--max-sessions-per-connection", "--max-partitions", "--max-idle-partitions", "--idle-timeout",
            "--handshake-timeout", "--hello-timeout", "--allow-origin", "--max-partitions-on-disk",
        ] {
            #expect(server.stdout.contains(option), "\(option)")
        }
    }

    @Test("a shared limit out of its range exits 64 naming the option, the range and the value")
    func limitOutOfRange() async throws {
        let server = try ChildProcess(port: 0, database: "postgres://u@h/d", extra: ["--max-connections", "0"])
        #expect(try await server.waitForExit() == 64)
        #expect(
            server.stderr.contains("--max-connections must be a whole number in 1…1000000, not 0"),
            "\(server.stderr)")
    }

    @Test("--max-offline is refused: the PostgreSQL store keeps no client's last-seen time")
    func maximumOfflineRefused() async throws {
        let server = try ChildProcess(port: 0, database: "postgres://u@h/d", extra: ["--max-offline", "30d"])
        #expect(try await server.waitForExit() == 64)
        #expect(server.stderr.contains("--max-offline is not supported by sync-server-pg"), "\(server.stderr)")
    }

    @Test("a database that cannot be reached makes it exit 1 with the reason")
    func unreachableDatabase() async throws {
        // A port nothing listens on: bound by this test (port 0: the kernel picks it) and held, never
        // listening, until the test ends, so no other process can take it meanwhile and a connection to it
        // is refused.
        let socket = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(socket >= 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(socket, pointer, length) == 0 && getsockname(socket, pointer, &length) == 0
            }
        }
        try #require(bound)
        let port = Int(UInt16(bigEndian: address.sin_port))
        try #require(port != 0)
        let server = try ChildProcess(port: 0, database: "postgres://nobody@127.0.0.1:\(port)/none")
        #expect(try await server.waitForExit() == 1)
        #expect(
            server.stderr.contains("cannot open postgres://nobody@127.0.0.1:\(port)/none"),
            "\(server.stderr)")
        #expect(!server.stdout.contains("ws://"))
    }
}

extension PostgresTests {
    /// `sync-server-pg` front ends as real subprocesses on one database, with engine clients on each:
    /// signals, SIGKILL, PostgreSQL stopped under load, listening connections terminated.
    @Suite("sync-server-pg front ends")
    struct FrontEndProcessTests {
        /// A WebSocket connection to the front end on `port` that said hello anonymously, and its events
        /// after the welcome; an issue is recorded unless it opened and was welcomed.
        func welcomedConnection(
            port: Int
        ) async -> (any SyncClientConnection, AsyncStream<SyncTransportEvent>.AsyncIterator) {
            let connection = WebSocketTransport().connect(to: .webSocket(host: "127.0.0.1", port: port))
            var events = connection.events.makeAsyncIterator()
            #expect(await events.next() == .opened)
            connection.send(.hello(Hello(credential: .anonymous)))
            let welcome = await events.next()
            let welcomed = if case .message(.welcome(WireProtocol.version, _?))? = welcome { true } else { false }
            #expect(welcomed, "\(String(describing: welcome))")
            return (connection, events)
        }

        /// `url` naming its connections `name` (so a test can find a front end's listening connection).
        func database(_ url: DatabaseURL, name: String) -> String {
            var url = url
            url.applicationName = name
            return url.description
        }

        /// The partition's whole log, read with a store of the test's own.
        func log(_ url: DatabaseURL) async throws -> [StoredChangeset] {
            let store = try await openStore(url, name: "inspector")
            do {
                let count = try await store.summaries(of: "p").count
                let log = count == 0 ? [] : try await store.read(1...UInt64(count), of: "p")
                await store.close()
                return log
            } catch {
                await store.close()
                throw error
            }
        }

        @Test(
            "SIGINT or SIGTERM the moment its URL line is read stops it cleanly: exit 0, never killed by the signal",
            arguments: [SIGINT, SIGTERM])
        func signalRightAfterTheURLLine(signal: Int32) async throws {
            let url = try await TestDatabase.create()
            for round in 1...5 {
                let server = try ChildProcess(port: 0, database: url.description, signalOnURL: signal)
                let status = try await server.waitForExit()
                #expect(
                    status == 0 && server.process.terminationReason == .exit,
                    "round \(round): status \(status), \(server.process.terminationReason == .exit ? "exited" : "killed by a signal"); \(server.stderr)"
                )
                #expect(server.stdout.contains("sync-server-pg stopped"), "round \(round)")
            }
        }

        @Test("--max-connections 1 applies: a second connection is refused with 503 while the first is open")
        func maximumConnectionsApplies() async throws {
            let url = try await TestDatabase.create()
            let server = try ChildProcess(port: 0, database: url.description, extra: ["--max-connections", "1"])
            let port = try await server.port()
            let (first, _) = await welcomedConnection(port: port)
            var second = WebSocketTransport().connect(to: .webSocket(host: "127.0.0.1", port: port)).events
                .makeAsyncIterator()
            let refusal = await second.next()
            guard case .closed(.refused(let reason))? = refusal else {
                Issue.record("expected the second connection to be refused, got \(String(describing: refusal))")
                first.close()
                _ = try await server.stop(SIGTERM)
                return
            }
            #expect(reason.contains("503"), "\(reason)")
            first.close()
            #expect(try await server.stop(SIGTERM) == 0)
        }

        @Test(
            "--max-partitions-on-disk 1 with one partition in the database: binding a new one is permissionDenied and makes no row; the held one binds"
        )
        func partitionsOnDisk() async throws {
            let url = try await createDatabase(holding: "p")
            let server = try ChildProcess(port: 0, database: url.description, extra: ["--max-partitions-on-disk", "1"])
            let client = try await WireTestClient.welcomed(
                on: WebSocketTransport().connect(to: .webSocket(host: "127.0.0.1", port: try await server.port())))
            client.send(.bind(Bind(sessionID: 2, partition: "q", clientFileID: 7, downloadedVersion: 0)))
            guard case .error(let refused) = try await client.next() else {
                Issue.record("a bind of a new partition beyond the limit was not refused")
                _ = try await server.stop(SIGTERM)
                return
            }
            #expect(refused.code == .permissionDenied, "\(refused)")
            #expect(refused.sessionID == 2)
            #expect(refused.retryAfterMilliseconds == nil)
            // The partition the database holds binds as always.
            let downloads = try await client.bind(partition: "p", clientFileID: 7)
            #expect(downloads.flatMap(\.entries).count == 1)
            let names = try await TestDatabase.admin(url) { connection, logger in
                var names: [String] = []
                for try await name in try await connection.query(
                    "SELECT name FROM sync_partitions ORDER BY name", logger: logger
                ).decode(String.self) { names.append(name) }
                return names
            }
            #expect(names == ["p"])
            client.connection.close()
            #expect(try await server.stop(SIGTERM) == 0, "\(server.stderr)")
        }

        @Test("it prints its ws:// URL, serves, and on SIGTERM closes connections with 1001 and exits 0")
        func serveAndStop() async throws {
            let url = try await TestDatabase.create()
            let server = try ChildProcess(port: 0, database: url.description)
            let port = try await server.port()
            #expect(server.stdout.contains("sync-server-pg listening on ws://127.0.0.1:\(port)"))
            var (_, events) = await welcomedConnection(port: port)
            #expect(try await server.stop(SIGTERM) == 0)
            let last = await events.next()
            guard case .closed(.connectionLost(let reason)) = last else {
                Issue.record("expected a lost connection, got \(String(describing: last))")
                return
            }
            #expect(reason.contains("1001"), "\(reason)")
            #expect(server.stdout.contains("sync-server-pg stopped"))
        }

        @Test(
            "a front end SIGKILLed mid-upload and restarted loses nothing acknowledged and stores nothing twice"
        )
        func killedAndRestarted() async throws {
            let url = try await TestDatabase.create()
            var writerFront = try ChildProcess(port: 0, database: database(url, name: "fe1"))
            let writerPort = try await writerFront.port()
            let readerFront = try ChildProcess(port: 0, database: database(url, name: "fe2"))
            // A 24 KiB upload window (a few changesets in flight at once): each hundred goes up in many round
            // trips, and the kill lands among them.
            let writer = try await Client(tag: "w", port: writerPort, uploadWindowBytes: 24 * 1024)
            let reader = try await Client(tag: "r", port: try await readerFront.port())
            let uploads = Collected(writer.session.progress(for: .upload, mode: .reportIndefinitely))
            for batch in [0..<100, 100..<200, 200..<300] {
                // Written while the writer is suspended (durable locally), then uploaded at once.
                writer.session.suspend()
                for index in batch { try await writer.write(index) }
                writer.session.resume()
                guard batch.upperBound < 300 else { break }
                // Kill once some of this hundred reached the reader through the other front end.
                try await eventually("the reader got some of this hundred") {
                    reader.received.values.count > batch.lowerBound
                }
                _ = try await writerFront.stop(SIGKILL)
                // Mid-upload, shown rather than assumed: the database holds some of this hundred, not all.
                let stored = try await log(url).count
                #expect(
                    stored > batch.lowerBound && stored < batch.upperBound, "\(stored) of \(batch.upperBound) stored")
                writerFront = try ChildProcess(port: writerPort, database: database(url, name: "fe1"))
                _ = try await writerFront.port()
            }
            try await writer.allAcknowledged()
            // Acknowledged, not only present: the writer's upload progress counts every byte as acknowledged.
            let totalBytes = writer.written.reduce(0) { $0 + $1.count }
            let acknowledged = try #require(uploads.values.last)
            #expect(acknowledged.transferredBytes == totalBytes && acknowledged.transferrableBytes == totalBytes)
            for client in [reader, writer] {
                try await eventually("\(client.tag) holds all 300", limit: .seconds(120)) {
                    client.received.values.count >= 300
                }
            }
            let log = try await log(url)
            #expect(log.count == 300)
            #expect(log.map(\.serverVersion) == Array(1...UInt64(log.count)))
            #expect(differences(of: reader, from: log) == [])
            #expect(differences(of: writer, from: log) == [])
            #expect(try await writerFront.stop(SIGTERM) == 0)
            #expect(try await readerFront.stop(SIGTERM) == 0)
            await writer.close()
            await reader.close()
        }

        @Test(
            "PostgreSQL restarted, then stopped and started under load: front ends reconnect, clients see errors and retry, nothing is lost or stored twice"
        )
        func databaseRestartedUnderLoad() async throws {
            let url = try await TestDatabase.create()
            let fronts = [
                try ChildProcess(port: 0, database: database(url, name: "fe1")),
                try ChildProcess(port: 0, database: database(url, name: "fe2")),
            ]
            var ports: [Int] = []
            for front in fronts { ports.append(try await front.port()) }
            let writers = [try await Client(tag: "w0", port: ports[0]), try await Client(tag: "w1", port: ports[1])]
            let readers = [try await Client(tag: "r0", port: ports[0]), try await Client(tag: "r1", port: ports[1])]
            let perWriter = 150
            let writing = Task {
                for index in 0..<perWriter {
                    for writer in writers { try await writer.write(index) }
                    try await Task.sleep(for: .milliseconds(10))
                }
            }
            try await eventually("some changesets went through") { readers[1].received.values.count >= 20 }
            try await TestDatabase.control("restart")
            try await eventually("more went through after the restart") { readers[1].received.values.count >= 60 }
            try await TestDatabase.control("stop")
            let everyone = writers + readers
            do {
                try await eventually("a client reported an error") {
                    everyone.contains { !$0.errors.values.isEmpty }
                }
            } catch {
                try await TestDatabase.control("start")
                throw error
            }
            try await TestDatabase.control("start")
            try await writing.value
            // Every write acknowledged, waited for with a deadline (a bare `wait(for: .upload)` would let a
            // stuck upload hang the suite until its time limit, naming nothing; one CI run did).
            for writer in writers {
                do {
                    try await eventually("\(writer.tag) has every write acknowledged", limit: .seconds(120)) {
                        writer.session.pendingWrites.value.isEmpty
                    }
                } catch {
                    // What a rare failure needs to be understood (the front ends log session errors at their
                    // default level, warn): the writer's state and the end of both front ends' logs.
                    Issue.record(
                        """
                        \(writer.tag): pending \(writer.session.pendingWrites.value), \
                        session \(writer.session.state.value), errors \(writer.errors.values.map(\.error))
                        fe1: \(fronts[0].stderr.suffix(6_000))
                        fe2: \(fronts[1].stderr.suffix(6_000))
                        """)
                    throw error
                }
            }
            let total = writers.count * perWriter
            for client in everyone {
                try await eventually("\(client.tag) holds \(total)", limit: .seconds(120)) {
                    client.received.values.count >= total
                }
            }
            let log = try await log(url)
            #expect(log.count == total)
            for client in everyone { #expect(differences(of: client, from: log) == []) }
            // The errors were the database's, retried: no session became invalid, none saw a protocol violation
            // (a stale session error once made a writer's client fail one and hang).
            for client in everyone {
                #expect(client.session.state.value == .active, "\(client.tag)")
                let violations = client.errors.values.filter {
                    if case .protocolViolation = $0.error { true } else { false }
                }
                #expect(violations.isEmpty, "\(client.tag): \(violations.map(\.error))")
            }
            let errors = everyone.map(\.errors.values.count).reduce(0, +)
            print("databaseRestartedUnderLoad: clients reported \(errors) errors and recovered")
            for front in fronts { #expect(try await front.stop(SIGTERM) == 0) }
            for client in everyone { await client.close() }
        }

        @Test("a front end whose listening connection is terminated three times sends its clients every changeset")
        func listenerTerminated() async throws {
            let url = try await TestDatabase.create()
            // Names of this test's own: a front end of an earlier test named fe2 may still have a listening
            // backend on its way out, which the counts below would take for this one's.
            let name = "fe2-" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
            let writerFront = try ChildProcess(port: 0, database: database(url, name: "fe1"))
            let readerFront = try ChildProcess(port: 0, database: database(url, name: name))
            let writer = try await Client(tag: "w", port: try await writerFront.port())
            let reader = try await Client(tag: "r", port: try await readerFront.port())
            let total = 240
            let writing = Task {
                for index in 0..<total {
                    try await writer.write(index)
                    try await Task.sleep(for: .milliseconds(5))
                }
            }
            for round in 1...3 {
                try await eventually("fe2 listens (round \(round))") {
                    try await TestDatabase.backends(applicationName: "\(name)/listen") == 1
                }
                let before = reader.received.values.count
                #expect(try await TestDatabase.terminate(applicationName: "\(name)/listen") == 1)
                try await eventually("the reader got more after round \(round)") {
                    reader.received.values.count > before
                }
            }
            try await writing.value
            try await writer.allAcknowledged()
            try await eventually("the reader holds all \(total)", limit: .seconds(120)) {
                reader.received.values.count >= total
            }
            let log = try await log(url)
            #expect(log.count == total)
            #expect(differences(of: reader, from: log) == [])
            #expect(try await writerFront.stop(SIGTERM) == 0)
            #expect(try await readerFront.stop(SIGTERM) == 0)
            await writer.close()
            await reader.close()
        }
    }
}
