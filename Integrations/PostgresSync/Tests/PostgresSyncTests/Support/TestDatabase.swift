import Foundation
import PostgresNIO
import PostgresSync
import TestSupport
import Testing

/// The PostgreSQL cluster the tests use: `SYNC_TEST_DATABASE_URL` (and `SYNC_TEST_PG_CTL` to stop and
/// start it), as `scripts/with-postgres.sh` sets them. Without the URL the tests are skipped, with a
/// message — except in CI (`CI` set), where its absence fails them.
enum TestDatabase {
    static let environment = ProcessInfo.processInfo.environment
    static let url = environment["SYNC_TEST_DATABASE_URL"]

    /// Whether the suites run: a database is given, or this is CI (which must give one).
    static let isEnabled = url != nil || environment["CI"] != nil
    static let skipReason: Comment =
        "no PostgreSQL: set SYNC_TEST_DATABASE_URL (scripts/with-postgres.sh swift test does)"

    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    /// The given database's URL.
    static func baseURL() throws -> DatabaseURL {
        guard let url else { throw Unavailable(description: "SYNC_TEST_DATABASE_URL is not set") }
        return try DatabaseURL(url)
    }

    /// A new, empty database in the cluster, for one test.
    static func create() async throws -> DatabaseURL {
        var url = try baseURL()
        let name = "sync_" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        try await admin { connection, logger in
            try await connection.query("CREATE DATABASE \(unescaped: name)", logger: logger)
        }
        url.database = name
        return url
    }

    /// The process ids of the backends whose `application_name` is `name`.
    static func backendPIDs(applicationName name: String) async throws -> [Int32] {
        try await admin { connection, logger in
            var pids: [Int32] = []
            let rows = try await connection.query(
                "SELECT pid FROM pg_stat_activity WHERE application_name = \(name)", logger: logger)
            for try await pid in rows.decode(Int32.self) { pids.append(pid) }
            return pids
        }
    }

    /// Runs `body` on a new connection to `url` (default: the given database), then closes it.
    @discardableResult
    static func admin<Result: Sendable>(
        _ url: DatabaseURL? = nil,
        _ body: (PostgresConnection, Logger) async throws -> Result
    ) async throws -> Result {
        let url = try url ?? baseURL()
        let logger = Logger(label: "tests")
        let configuration = PostgresConnection.Configuration(
            host: url.host, port: url.port, username: url.user, password: url.password, database: url.database,
            tls: .disable)
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        do {
            let result = try await body(connection, logger)
            try await connection.close()
            return result
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// Terminates the backends whose `application_name` is `name`; how many there were.
    @discardableResult
    static func terminate(applicationName name: String) async throws -> Int {
        try await admin { connection, logger in
            var count = 0
            let rows = try await connection.query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = \(name)",
                logger: logger)
            for try await terminated in rows.decode(Bool.self) where terminated { count += 1 }
            return count
        }
    }

    /// How many backends with `application_name` `name` are connected.
    static func backends(applicationName name: String) async throws -> Int {
        try await admin { connection, logger in
            let rows = try await connection.query(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = \(name)", logger: logger)
            for try await count in rows.decode(Int64.self) { return Int(count) }
            return 0
        }
    }

    /// Runs `SYNC_TEST_PG_CTL action` (`stop`, `start`, `restart`) and waits (at most two minutes) for it
    /// to exit, polling `waitpid` so that nothing blocks a thread of the cooperative pool.
    ///
    /// Spawned directly rather than with `Process`: the server that `pg_ctl start` leaves running would
    /// inherit what `Process` watches to see its child end, and the child would never seem to exit.
    static func control(_ action: String) async throws {
        guard let program = environment["SYNC_TEST_PG_CTL"] else {
            throw Unavailable(description: "SYNC_TEST_PG_CTL is not set (scripts/with-postgres.sh sets it)")
        }
        var pid: pid_t = 0
        let arguments: [UnsafeMutablePointer<CChar>?] = [strdup(program), strdup(action), nil]
        defer { for argument in arguments { free(argument) } }
        let spawned = posix_spawn(&pid, program, nil, nil, arguments, environ)
        guard spawned == 0 else { throw Unavailable(description: "cannot run \(program): errno \(spawned)") }
        var status: Int32 = 0
        try await eventually("\(program) \(action) to exit", limit: .seconds(120)) {
            waitpid(pid, &status, WNOHANG) == pid
        }
        // Exited normally (low seven bits 0) with status 0.
        guard status & 0x7F == 0, (status >> 8) & 0xFF == 0 else {
            throw Unavailable(description: "\(program) \(action) ended with wait status \(status)")
        }
    }
}
