import Dispatch
import Foundation
import SyncServer
import SyncStreams
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Lets open connections finish for at most `timeout` after a stop signal: new connections are refused
/// and `/healthz` answers `503` meanwhile (`server.isStopping`). Returns when none is open any more, when
/// `timeout` passed, or when a second SIGINT or SIGTERM arrived (stop at once); says which on
/// `ProgramLog`. The caller then stops the server (`SyncServer.stop()` closes what is still open).
public func drain(_ server: SyncServer, for timeout: Duration, signals: StopSignal) async {
    server.beginDraining()
    let deadline = ContinuousClock.now + timeout
    ProgramLog.write(
        .info, "draining \(server.connectionCount) connections for at most \(timeout) (signal again to stop now)")
    while server.connectionCount > 0 {
        if signals.stopCount > 1 {
            ProgramLog.write(.info, "second signal: stopping now")
            return
        }
        if ContinuousClock.now >= deadline {
            ProgramLog.write(.info, "drain timeout: closing \(server.connectionCount) connections")
            return
        }
        try? await Task.sleep(for: .milliseconds(20))
    }
    ProgramLog.write(.info, "drained: no connection left")
}

/// SIGHUP: reads the keys file again (on the signal's thread: blocking file I/O stays off the pool) and,
/// if it is valid, makes its keys the ones accepted from the next `hello` on; a malformed or unreadable
/// file keeps the keys in use and logs an error. Give it to `StopSignal.onHangUp(_:)`:
///
/// ```swift
/// stopSignal.onHangUp { reloadKeys(server: server, path: options.core.apiKeysFile, log: { ProgramLog.write($0, $1) }) }
/// ```
public func reloadKeys(server: SyncServer, path: String?, log: @escaping @Sendable (SyncLogLevel, String) -> Void) {
    guard let path else {
        log(.warn, "SIGHUP: no --api-keys file to reload (anonymous access stays)")
        return
    }
    let keys: [String: Set<String>]
    do {
        keys = try APIKeysFile.load(path: path)
    } catch {
        log(.error, "SIGHUP: cannot reload the API keys file, keeping the keys in use: \(error)")
        return
    }
    Task {
        await server.replaceAuthentication(.apiKeys(keys))
        log(.info, "SIGHUP: reloaded \(keys.count) API keys from \(path)")
    }
}

/// `--log-format json`: one JSON object per line on standard error —
/// `{"time":"…","level":"warn","category":"sync.server","message":"…","connection":12,"peer":"127.0.0.1:50312"}`
/// — with `connection` and `peer` `null` when the event concerns no connection (`peer` is known for
/// transports whose connections are `PeerAddressed`).
public enum JSONLogLine {
    /// The server's events: the line is made on the logging task (which knows its connection) and written
    /// on a queue of its own, so a full pipe never blocks the task that logs.
    public static let sink: @Sendable (SyncLogEvent) -> Void = { event in
        let text = line(event, connection: ConnectionLogContext.current) + "\n"
        queue.async { FileHandleOutput.standardError(text) }
    }

    /// Where the server's lines are written, in order; `flush()` waits for them.
    private static let queue = DispatchQueue(label: "SyncServerCommandLine.json-log")

    /// Waits until every line handed to `sink` was written.
    public static func flush() { queue.sync {} }

    static func line(_ event: SyncLogEvent, connection: ConnectionLogContext?) -> String {
        let time = event.description.prefix { $0 != " " }
        var fields = [
            "\"time\":\(quoted(String(time)))", "\"level\":\(quoted("\(event.level)"))",
            "\"category\":\(quoted(event.category))", "\"message\":\(quoted(event.message))",
        ]
        fields.append("\"connection\":\(connection.map { "\($0.id)" } ?? "null")")
        fields.append("\"peer\":\(connection?.peer.map(quoted) ?? "null")")
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// `text` as a JSON string: quotes, backslashes and every control character escaped.
    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F || (0x2028...0x2029).contains(scalar.value):
                result +=
                    "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}

/// The program's own lines on standard error (start-up problems, signals, the drain): text —
/// `sync-server: warning: …` — or, with `--log-format json`, JSON lines like the server's (their
/// category: the program's name).
public enum ProgramLog {
    private static let settings = Mutex((programName: "sync-server", json: false))

    /// Names the program (first on text lines, the category of JSON ones) and chooses JSON lines (`json`)
    /// or text; call it once the options are parsed. Before: `sync-server`, text.
    public static func configure(programName: String, json: Bool) {
        settings.withLock { $0 = (programName, json) }
    }

    /// Writes `message` at `level` on standard error, after the server's JSON lines written so far.
    public static func write(_ level: SyncLogLevel, _ message: String) {
        let (programName, json) = settings.withLock { $0 }
        if json {
            let event = SyncLogEvent(date: Date(), level: level, category: programName, message: message)
            JSONLogLine.flush()
            FileHandleOutput.standardError(JSONLogLine.line(event, connection: nil) + "\n")
            return
        }
        let prefix =
            switch level {
            case .warn: "warning: "
            case .error: "error: "
            default: ""
            }
        FileHandleOutput.standardError("\(programName): \(prefix)\(message)\n")
    }
}

extension ServerCommandLine {
    /// The last thing a server's `main` does when it logs through `ProgramLog`: waits for SIGINT or
    /// SIGTERM, logs `SIGTERM: stopping`, drains `server` for `drainTimeout` when one is given (see
    /// `drain(_:for:signals:)`), runs `stopping` (stop the server, close the store), waits for the JSON
    /// log lines, says `<programName> stopped` on standard output and exits 0.
    @MainActor
    public static func exitWhenStopped(
        by stopSignal: StopSignal, draining server: SyncServer, for drainTimeout: Duration?,
        stopping: () async -> Void
    ) async -> Never {
        let received = await stopSignal.wait()
        ProgramLog.write(.info, "\(received == SIGINT ? "SIGINT" : "SIGTERM"): stopping")
        if let drainTimeout {
            await drain(server, for: drainTimeout, signals: stopSignal)
        }
        await stopping()
        JSONLogLine.flush()
        FileHandleOutput.standardOutput("\(programName) stopped\n")
        exitAfterStopping()
    }
}
