import Foundation

extension ChildProcess {
    /// Starts a server `executable` with `arguments`, its waits lasting `defaultDeadline`; with
    /// `signalOnURL`, that signal is sent the moment it prints its `ws://` or `wss://` URL (from the thread
    /// that reads its output, before the test even sees it).
    public convenience init(
        server executable: URL, _ arguments: [String], signalOnURL: Int32? = nil,
        defaultDeadline: Duration = .seconds(60)
    ) throws {
        try self.init(
            executable, arguments,
            trigger: signalOnURL.map { SignalTrigger($0) { $0.firstMatch(of: Self.serverURL) != nil } },
            defaultDeadline: defaultDeadline)
    }

    /// The port of the `ws://host:port` or `wss://host:port` URL the server printed, waiting at most
    /// `deadline` (default: `defaultDeadline`).
    public func port(deadline: Duration? = nil) async throws -> Int {
        try await waitForOutput("a ws:// or wss:// URL", deadline: deadline) {
            $0.firstMatch(of: Self.serverURL) != nil
        }
        guard let match = stdout.firstMatch(of: Self.serverURL), let port = Int(match.1) else {
            throw TimedOut(description: "no port in \(stdout)")
        }
        return port
    }

    /// A `ws://` or `wss://` URL with a host (a name, an IPv4 address or a bracketed IPv6 one) and a port,
    /// the port's digits (captured) ended by the path or a space, so that a line half read yields no port.
    private static var serverURL: Regex<(Substring, Substring)> {
        /wss?:\/\/(?:\[[0-9a-fA-F:.]+\]|[^:\s\/]+):(\d+)[\/\s]/
    }
}
