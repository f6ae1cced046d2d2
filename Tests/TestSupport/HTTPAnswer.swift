import Foundation

/// A plain HTTP GET with `curl` (a real HTTP client, a child process waited for with a deadline), and what
/// it answered: the status and the body. Tests of `/metrics` and `/healthz` use it against `sync-server`
/// and `sync-server-nio`.
public struct HTTPAnswer: Sendable {
    public var status: Int
    public var body: String

    /// An answer with `status` and `body` (a test reads `samples` of a metrics page it got in process).
    public init(status: Int, body: String) {
        self.status = status
        self.body = body
    }

    /// `curl` did not finish cleanly or printed no status.
    public struct Failed: Error, CustomStringConvertible {
        public var description: String
    }

    public static func get(_ url: String) async throws -> HTTPAnswer {
        let curl = try ChildProcess(
            URL(fileURLWithPath: "/usr/bin/env"), ["curl", "-sS", "--max-time", "30", "-w", "\n%{http_code}", url])
        let status = try await curl.waitForExit()
        guard status == 0, let newline = curl.stdout.lastIndex(of: "\n"),
            let code = Int(curl.stdout[curl.stdout.index(after: newline)...])
        else { throw Failed(description: "curl \(url) failed (\(status)): \(curl.stderr)") }
        return HTTPAnswer(status: code, body: String(curl.stdout[..<newline]))
    }

    /// The samples of a Prometheus text page: `name{labels}` → value (comments skipped).
    public var samples: [String: Double] {
        var samples: [String: Double] = [:]
        for line in body.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                continue
            }
            samples[String(line[..<space])] = value
        }
        return samples
    }
}
