import Foundation

/// Where a PostgreSQL database is, parsed from a URL of the form
/// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?PARAMETER=VALUE&…]` (`postgresql://` too; user and
/// password percent-encoded; PORT 5432 when omitted). Parameters: `sslmode=disable|prefer|require`
/// (default `disable`), `host=SOCKETDIR` (a directory holding the server's unix socket, used instead of
/// TCP), `application_name=NAME` (how the connections appear in `pg_stat_activity`).
public struct DatabaseURL: Sendable, Hashable, CustomStringConvertible {
    /// How the connection uses TLS.
    public enum TLSMode: String, Sendable, Hashable {
        /// Plain TCP (the default).
        case disable
        /// TLS when the server offers it, without failing otherwise.
        case prefer
        /// TLS, with the server's certificate verified; the connection fails without it.
        case require
    }

    public var host: String
    public var port: Int
    public var user: String
    public var password: String?
    public var database: String
    public var tls: TLSMode
    /// The directory of the server's unix socket, when given with `host=`.
    public var socketDirectory: String?
    /// The `application_name` given with `application_name=`.
    public var applicationName: String?

    /// Parses `text`.
    ///
    /// - Throws: `DatabaseURLError` naming what is wrong (scheme, user, database, port, sslmode).
    public init(_ text: String) throws(DatabaseURLError) {
        guard let components = URLComponents(string: text) else { throw .malformed(text) }
        guard let scheme = components.scheme, scheme == "postgres" || scheme == "postgresql" else {
            throw .unsupportedScheme(components.scheme ?? "")
        }
        guard let user = components.user, !user.isEmpty else { throw .missingUser }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty else { throw .missingDatabase }
        self.user = user
        self.password = components.password
        self.database = database
        host = components.host.map { $0.hasPrefix("[") ? String($0.dropFirst().dropLast()) : $0 } ?? "127.0.0.1"
        if host.isEmpty { host = "127.0.0.1" }
        port = components.port ?? 5432
        guard (1...65535).contains(port) else { throw .badPort(port) }
        tls = .disable
        for item in components.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                guard let value = item.value, let mode = TLSMode(rawValue: value) else {
                    throw .unsupportedSSLMode(item.value ?? "")
                }
                tls = mode
            case "host":
                socketDirectory = item.value
            case "application_name":
                applicationName = item.value
            default:
                throw .unsupportedParameter(item.name)
            }
        }
    }

    /// The URL without its password (for logs and the start-up line).
    public var description: String {
        var text = "postgres://\(user)@\(host.contains(":") ? "[\(host)]" : host):\(port)/\(database)"
        var parameters: [String] = []
        if tls != .disable { parameters.append("sslmode=\(tls.rawValue)") }
        if let socketDirectory { parameters.append("host=\(socketDirectory)") }
        if let applicationName { parameters.append("application_name=\(applicationName)") }
        if !parameters.isEmpty { text += "?" + parameters.joined(separator: "&") }
        return text
    }
}

/// Why a database URL was refused.
public enum DatabaseURLError: Error, Sendable, Hashable, CustomStringConvertible {
    case malformed(String)
    case unsupportedScheme(String)
    case missingUser
    case missingDatabase
    case badPort(Int)
    case unsupportedSSLMode(String)
    case unsupportedParameter(String)

    public var description: String {
        switch self {
        case .malformed: "not a URL (expected postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE)"
        case .unsupportedScheme(let scheme): "the scheme must be postgres:// or postgresql://, not \(scheme)://"
        case .missingUser: "the URL names no user (postgres://USER@HOST/DATABASE)"
        case .missingDatabase: "the URL names no database (postgres://USER@HOST/DATABASE)"
        case .badPort(let port): "port \(port) is not 1…65535"
        case .unsupportedSSLMode(let mode): "sslmode must be disable, prefer or require, not \(mode)"
        case .unsupportedParameter(let name):
            "unknown URL parameter \(name) (sslmode, host and application_name are understood)"
        }
    }
}
