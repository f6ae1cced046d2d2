import Foundation
import PostgresNIO
import PostgresSync
import SyncEngine
import SyncServer
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension PostgresTests {
    /// What a stalled lock, a silent listening connection and a database moved back in time do to a store
    /// (issue 21 item 10).
    @Suite("Robustness")
    struct RobustnessTests {
        @Test(
            "a row lock held by a stalled transaction cannot exhaust the pool: lock_timeout cancels the appends waiting for it, and other partitions stay usable while it is held"
        )
        func stalledLockCannotExhaustThePool() async throws {
            let url = try await TestDatabase.create()
            let store = try await PostgresPartitionStore.open(
                .init(
                    url: url, maximumConnections: 2, operationTimeout: .seconds(3), applicationName: "locked",
                    logLevel: .off))
            try await store.append(changesets(file: 1, from: 1, at: 1, count: 1), to: "p")
            _ = try await store.summaries(of: "q")  // registered before the lock is taken
            // Another connection holds p's row lock in an open transaction for the rest of the test.
            try await TestDatabase.admin(url) { holder, logger in
                try await holder.query("BEGIN", logger: logger)
                try await holder.query(
                    "SELECT latest_version FROM sync_partitions WHERE name = 'p' FOR UPDATE", logger: logger)
                // Four appends queue behind the lock: twice the pool's connections. Each fails (the
                // database cancels it at lock_timeout, or the store stops waiting at operationTimeout).
                let failures = await withTaskGroup(of: Bool.self) { group in
                    for file in 2...5 {
                        group.addTask {
                            do {
                                try await store.append(
                                    changesets(file: UInt64(file), from: 1, at: 2, count: 1), to: "p")
                                return false
                            } catch {
                                return true
                            }
                        }
                    }
                    return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
                }
                #expect(failures == 4)
                // With the lock still held: no connection of the store waits for it, and the pool answers.
                try await eventually("no backend of the store waits for a lock", limit: .seconds(30)) {
                    try await TestDatabase.admin(url) { connection, logger in
                        let rows = try await connection.query(
                            """
                            SELECT count(*) FROM pg_stat_activity
                            WHERE application_name = 'locked' AND wait_event_type = 'Lock'
                            """, logger: logger)
                        for try await count in rows.decode(Int64.self) { return count == 0 }
                        return false
                    }
                }
                #expect(try await store.summaries(of: "q").isEmpty)
                #expect(try await store.summaries(of: "p").map(\.serverVersion) == [1])
                try await holder.query("ROLLBACK", logger: logger)
            }
            try await store.append(changesets(file: 2, from: 1, at: 2, count: 1), to: "p")
            await store.close()
        }

        @Test(
            "a listening connection whose backend stops answering without closing the socket is noticed by the probe and replaced; an append made meanwhile is announced"
        )
        func silentListenerIsReplaced() async throws {
            let url = try await TestDatabase.create()
            let listener = try await PostgresPartitionStore.open(
                .init(
                    url: url, operationTimeout: .seconds(2), listenProbeInterval: .milliseconds(200),
                    applicationName: "probed", logLevel: .off))
            let writer = try await openStore(url, name: "writer")
            let received = Drained(try #require(listener.appendNotifications()))
            try await eventually("listening") { listener.isListening }
            _ = try await listener.summaries(of: "p")
            let pids = try await TestDatabase.backendPIDs(applicationName: "probed/listen")
            try #require(pids.count == 1)
            // The backend freezes: its socket stays open, nothing answers and nothing closes.
            #expect(kill(pid_t(pids[0]), SIGSTOP) == 0)
            defer {
                kill(pid_t(pids[0]), SIGCONT)
                kill(pid_t(pids[0]), SIGTERM)
            }
            try await writer.append(changesets(file: 1, from: 1, at: 1, count: 3), to: "p")
            try await eventually("the append is announced", limit: .seconds(60)) {
                received.values.contains(AppendNotification(partition: "p", latestVersion: 3))
            }
            #expect(listener.listenCount >= 2)
            await writer.close()
            await listener.close()
        }

        @Test(
            "every partition has a non-zero history id that stays across reopening; a log lost and written again gets another"
        )
        func historyIDs() async throws {
            let url = try await TestDatabase.create()
            let store = try await openStore(url)
            let first = try await store.historyID(of: "p")
            #expect(first != 0)
            #expect(try await store.historyID(of: "p") == first)
            #expect(try await store.historyID(of: "q") != first)
            await store.close()
            let reopened = try await openStore(url)
            #expect(try await reopened.historyID(of: "p") == first)
            await reopened.close()
            // The partition's log is lost (a database emptied, or replaced by one that never had it).
            try await TestDatabase.admin(url) { connection, logger in
                try await connection.query("DELETE FROM sync_changesets", logger: logger)
                try await connection.query("DELETE FROM sync_partitions", logger: logger)
            }
            let again = try await openStore(url)
            let second = try await again.historyID(of: "p")
            #expect(second != 0)
            #expect(second != first)
            await again.close()
        }

        @Test(
            "a database that lost a log which then grew past a reading client again: the client gets a historyLost reset, not silence"
        )
        func databaseMovedBackInTimeResetsTheClient() async throws {
            let url = try await TestDatabase.create()
            let directory = TemporaryDirectory()
            defer { directory.remove() }
            try await readerHoldingThreeVersions(url, directory)
            // The database loses the log (restored from a copy without it), and others write past the
            // client's version 3 again, through a new front end.
            try await TestDatabase.admin(url) { connection, logger in
                try await connection.query("DELETE FROM sync_changesets", logger: logger)
                try await connection.query("DELETE FROM sync_partitions", logger: logger)
            }
            let after = try await writtenPastTheClient(url)
            let (app, session) = try await reopenExpectingHistoryLost(port: after.frontEnd.port, directory)
            let received = Collected(session.changesets)
            try await eventually("the new log reached the client", limit: .seconds(60)) {
                received.values.count >= 5
            }
            try await app.close()
            await after.other.close()
            await after.frontEnd.stop()
        }

        @Test(
            "a database restored from an older copy of the same history, then written past a reading client again: the bind's checkpoint (other bytes at its version) gets it a historyLost reset, and it holds the restored log"
        )
        func databaseRestoredFromAnOlderCopyResetsAReader() async throws {
            let url = try await TestDatabase.create()
            let directory = TemporaryDirectory()
            defer { directory.remove() }
            try await readerHoldingThreeVersions(url, directory)
            // The database goes back to a copy taken after version 1: same partition row, same history id.
            try await TestDatabase.admin(url) { connection, logger in
                try await connection.query("DELETE FROM sync_changesets WHERE server_version > 1", logger: logger)
                try await connection.query("UPDATE sync_partitions SET latest_version = 1", logger: logger)
            }
            let after = try await writtenPastTheClient(url)  // the log: 6 versions, past the reader's 3
            let (app, session) = try await reopenExpectingHistoryLost(port: after.frontEnd.port, directory)
            let received = Collected(session.changesets)
            let log = try await after.frontEnd.store.read(1...6, of: "p").map { Data($0.data) }
            try await eventually("the client holds the restored log", limit: .seconds(60)) {
                received.values.map(\.data).suffix(6) == log
            }
            try await app.close()
            await after.other.close()
            await after.frontEnd.stop()
        }

        @Test(
            "a database restored from an older copy of the same history, then written past the client again: a client whose acknowledged changesets it lacks gets a historyLost reset and uploads them again"
        )
        func databaseRestoredFromAnOlderCopyResetsTheClient() async throws {
            let url = try await TestDatabase.create()
            let directory = TemporaryDirectory()
            defer { directory.remove() }
            do {
                let before = try await InProcessFrontEnd.start(url, name: "before")
                let app = networkApp(port: before.port, directory)
                let session = try await app.login(.anonymous).openSession(partition: "p")
                for index in 0..<3 { try await session.write(Data("mine \(index)".utf8)) }
                try await eventually("every write acknowledged") { session.pendingWrites.value.isEmpty }
                try await app.close()
                await before.stop()
            }
            // The database goes back to a copy taken after version 1: same partition row, same history id.
            try await TestDatabase.admin(url) { connection, logger in
                try await connection.query("DELETE FROM sync_changesets WHERE server_version > 1", logger: logger)
                try await connection.query("UPDATE sync_partitions SET latest_version = 1", logger: logger)
            }
            let after = try await writtenPastTheClient(url)
            let (app, session) = try await reopenExpectingHistoryLost(port: after.frontEnd.port, directory)
            // The reset's recovered changesets (those the restore lost) are uploaded again: in the log, each once.
            func log() async throws -> [String] {
                try await after.frontEnd.store.read(1...20, of: "p").map { String(decoding: $0.data, as: UTF8.self) }
            }
            try await eventually("the lost changesets uploaded again", limit: .seconds(60)) {
                try await log().contains("mine 2")
            }
            try await eventually("every write acknowledged") { session.pendingWrites.value.isEmpty }
            let log = try await log()
            for index in 0..<3 {
                #expect(log.filter { $0 == "mine \(index)" }.count == 1, "\(log)")
            }
            try await app.close()
            await after.other.close()
            await after.frontEnd.stop()
        }

        /// A new front end on `url` ("after"), through which another client ("other") writes five
        /// changesets, acknowledged: past the version the earlier client holds.
        /// A writer writes versions 1…3 through a front end on `url`, and a client in `directory` that only
        /// reads downloads them: it holds versions 1…3 and no acknowledgement the log could lack.
        private func readerHoldingThreeVersions(_ url: DatabaseURL, _ directory: TemporaryDirectory) async throws {
            let before = try await InProcessFrontEnd.start(url, name: "before")
            let writer = try await Client(tag: "before", port: before.port)
            for index in 0..<3 { try await writer.write(index) }
            try await writer.allAcknowledged()
            await writer.close()
            let app = networkApp(port: before.port, directory)
            let session = try await app.login(.anonymous).openSession(partition: "p")
            let received = Collected(session.changesets)
            try await eventually("the reader holds versions 1…3") { received.values.count == 3 }
            try await app.close()
            await before.stop()
        }

        private func writtenPastTheClient(
            _ url: DatabaseURL
        ) async throws -> (frontEnd: InProcessFrontEnd, other: Client) {
            let frontEnd = try await InProcessFrontEnd.start(url, name: "after")
            let other = try await Client(tag: "other", port: frontEnd.port)
            for index in 0..<5 { try await other.write(index) }
            try await other.allAcknowledged()
            return (frontEnd, other)
        }

        /// Opens the earlier client's app again (its files in `directory`) on `port`, and waits for its
        /// client reset, which must be `historyLost`.
        private func reopenExpectingHistoryLost(
            port: Int, _ directory: TemporaryDirectory
        ) async throws -> (app: SyncApp, session: SyncSession) {
            let resets = Resets()
            let app = networkApp(port: port, directory) { $0.clientResetHandler = resets.handler }
            let session = try await app.login(.anonymous).openSession(partition: "p")
            try await eventually("a client reset", limit: .seconds(60)) { !resets.reasons.isEmpty }
            #expect(resets.reasons.first == .historyLost)
            return (app, session)
        }
    }
}
