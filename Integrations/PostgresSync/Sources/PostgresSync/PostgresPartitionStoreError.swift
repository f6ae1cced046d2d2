import PostgresNIO

/// Why a `PostgresPartitionStore` operation failed.
public enum PostgresPartitionStoreError: Error, Sendable, CustomStringConvertible {
    /// The operation did not finish within the configuration's `operationTimeout` (the database is
    /// unreachable, restarting, or overloaded). Its effect is unknown: an append may still commit, which
    /// the server sees as a `PartitionStoreConflict` on its next append or as a notification.
    case timedOut(operation: String, after: Duration)
    /// The database answered with an error, or the connection failed: the PostgreSQL error code
    /// (SQLSTATE) when there is one and its message.
    case database(operation: String, code: String?, message: String)
    /// The database's schema is newer than this code understands.
    case schemaTooNew(found: Int, supported: Int)
    /// The partition's log in the database is shorter than the server's view of it: entries the server
    /// saw committed are gone (the database was restored from an older backup?). Nothing was written.
    case logShorter(partition: String, latestVersion: UInt64, expected: UInt64)
    /// A row did not have the expected shape.
    case unexpectedRow(operation: String)
    /// The store was closed.
    case closed

    public var description: String {
        switch self {
        case .timedOut(let operation, let after): "\(operation): no answer from PostgreSQL within \(after)"
        case .database(let operation, let code, let message):
            "\(operation): PostgreSQL \(code.map { "error \($0)" } ?? "connection failed"): \(message)"
        case .schemaTooNew(let found, let supported):
            "the database has schema version \(found); this server knows versions up to \(supported)"
        case .logShorter(let partition, let latest, let expected):
            "the log of partition \(partition) ends at version \(latest) in the database, before \(expected)"
        case .unexpectedRow(let operation): "\(operation): PostgreSQL returned an unexpected row"
        case .closed: "the store is closed"
        }
    }

    /// `error` as a store error: a `PSQLError` becomes `.database` with its SQLSTATE and message (never
    /// the query or its values); store errors and conflicts pass through.
    static func wrap(_ error: any Error, _ operation: String) -> any Error {
        if error is PostgresPartitionStoreError { return error }
        if let transaction = error as? PostgresTransactionError {
            // The first of what went wrong: BEGIN, the body, COMMIT, then ROLLBACK.
            if let first = transaction.beginError ?? transaction.closureError ?? transaction.commitError
                ?? transaction.rollbackError
            {
                return wrap(first, operation)
            }
        }
        guard let error = error as? PSQLError else {
            return PostgresPartitionStoreError.database(operation: operation, code: nil, message: "\(error)")
        }
        if let info = error.serverInfo {
            return PostgresPartitionStoreError.database(
                operation: operation, code: info[.sqlState], message: info[.message] ?? "\(error.code)")
        }
        return PostgresPartitionStoreError.database(operation: operation, code: nil, message: "\(error.code)")
    }

    /// The SQLSTATE of `error`, when it is a server's error.
    static func sqlState(of error: any Error) -> String? {
        (error as? PSQLError)?.serverInfo?[.sqlState]
    }
}
