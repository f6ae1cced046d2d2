import Foundation

extension ChildProcess {
    /// The built `sync-server`.
    package static var syncServer: URL { built("sync-server") }

    /// Starts the built `sync-server` with `arguments`; with `signalOnURL`, that signal is sent the moment
    /// its URL line arrives.
    package convenience init(syncServer arguments: [String], signalOnURL: Int32? = nil) throws {
        try self.init(
            Self.syncServer, arguments, trigger: signalOnURL.map { SignalTrigger($0) { $0.contains("ws://") } })
    }

    /// The port of the `ws://host:port` URL the server printed, waiting at most `deadline`.
    package func port(deadline: Duration = .seconds(60)) async throws -> Int {
        let pattern = /ws:\/\/(?:\[[0-9a-fA-F:.]+\]|[^:\s\/]+):(\d+)/
        try await waitForOutput("a ws:// URL", deadline: deadline) { $0.firstMatch(of: pattern) != nil }
        guard let match = stdout.firstMatch(of: pattern), let port = Int(match.1) else {
            throw TimedOut(description: "no port in \(stdout)")
        }
        return port
    }
}
