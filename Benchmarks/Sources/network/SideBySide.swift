import Foundation

/// `network side-by-side --root-server PATH --nio-server PATH`: the root `sync-server` and `sync-server-nio`
/// on loopback in one run, each a child process with a durable file store of its own (`--data`, the same
/// flags), driven by the same clients (the root package's `SyncApp` and `WebSocketTransport`, and a raw
/// ping client), so that only the server's front end differs. Every scenario starts a fresh server, the
/// root's first, then NIO's. Prints one Markdown table (docs/PERFORMANCE.md, "sync-server beside
/// sync-server-nio").
enum SideBySide {
    struct Options {
        var rootServer = ""
        var nioServer = ""
        var sessions = 5_000
        var megabytes = 64
        var writesInFlight = 64
        var echoConnections = [512, 4_096]
        var echoWindow = 8
        var echoSeconds = 5.0
        /// `--scenarios p8n,p11,p12,echo` (default: all); the others' rows show "—".
        var scenarios: Set<String> = ["p8n", "p11", "p12", "echo"]

        init(arguments: ArraySlice<String>) {
            var arguments = arguments.makeIterator()
            while let flag = arguments.next() {
                let value = arguments.next() ?? ""
                switch flag {
                case "--root-server": rootServer = value
                case "--nio-server": nioServer = value
                case "--sessions": sessions = Int(value)!
                case "--megabytes": megabytes = Int(value)!
                case "--echo-connections": echoConnections = value.split(separator: ",").map { Int($0)! }
                case "--echo-window": echoWindow = Int(value)!
                case "--echo-seconds": echoSeconds = Double(value)!
                case "--scenarios": scenarios = Set(value.split(separator: ",").map(String.init))
                default: fatalError("unknown option \(flag)")
                }
            }
            precondition(!rootServer.isEmpty && !nioServer.isEmpty, "--root-server PATH and --nio-server PATH")
        }
    }

    /// One line of the table: a figure for each server, and how the root's compares with the goal.
    struct Row {
        var figure: String
        var root: Double?
        var nio: Double?
        var decimals: Int
        /// `root ÷ nio` must be at least this (throughput) or at most (`lowerIsBetter`); nil: no goal.
        var goal: Double?
        var lowerIsBetter: Bool

        var markdown: String {
            func text(_ value: Double?) -> String { value.map { String(format: "%.\(decimals)f", $0) } ?? "—" }
            guard let root, let nio, nio > 0 else { return "| \(figure) | \(text(root)) | \(text(nio)) | — | — |" }
            let ratio = root / nio
            var verdict = "—"
            if let goal {
                let met = lowerIsBetter ? ratio <= goal : ratio >= goal
                let better = lowerIsBetter ? nio < root : nio > root
                verdict = (met ? "met" : "**not met**") + (better ? " (NIO better)" : "")
                verdict = "\(lowerIsBetter ? "≤" : "≥") \(String(format: "%.2f", goal))×: " + verdict
            }
            return "| \(figure) | \(text(root)) | \(text(nio)) | \(String(format: "%.2f", ratio))× | \(verdict) |"
        }
    }

    static func run(_ options: Options) async {
        raiseOpenFileLimit()  // the servers inherit it (sync-server raises its own; sync-server-nio does not)
        let loadBefore = loadAverage()
        let started = Date()
        let sides = [("sync-server", options.rootServer), ("sync-server-nio", options.nioServer)]
        var rows: [Row] = []

        /// Runs `measure` on a fresh server of each side; nil where it failed (printed).
        /// A scenario that has not finished after 10 minutes is abandoned (its server is stopped).
        func eachSide<Figure: Sendable>(
            _ scenario: String, _ measure: @escaping @Sendable (ServerProcess) async throws -> Figure
        ) async -> [Figure?] {
            let key = scenario.hasPrefix("ping") ? "echo" : scenario.lowercased()
            guard options.scenarios.contains(key) else { return [nil, nil] }
            var figures: [Figure?] = []
            for (name, executable) in sides {
                FileHandle.standardError.write(Data("\(scenario): \(name)…\n".utf8))
                do {
                    let server = try await ServerProcess.start(name: name, executable: executable)
                    do {
                        figures.append(try await withDeadline(.seconds(600)) { try await measure(server) })
                    } catch {
                        print("  \(scenario) on \(name) failed: \(error)")
                        figures.append(nil)
                    }
                    await server.stop()
                } catch {
                    print("  \(scenario): \(error)")
                    figures.append(nil)
                }
            }
            return figures
        }

        let p8n = await eachSide("P8n") {
            try await SideBySideP8n.mebibytesPerSecond(
                server: $0, megabytes: options.megabytes, writesInFlight: options.writesInFlight)
        }
        rows.append(
            Row(
                figure:
                    "P8n: \(options.megabytes) MiB as 64 KiB changesets, \(options.writesInFlight) writes in flight, app → server → app (MiB/s)",
                root: p8n[0], nio: p8n[1], decimals: 1, goal: 0.8, lowerIsBetter: false))

        let p11 = await eachSide("P11") {
            try await SideBySideP11.residentBytesPerConnection(server: $0, sessions: options.sessions)
        }
        rows.append(
            Row(
                figure: "P11: server RSS growth per connection, \(options.sessions) bound sessions (bytes)",
                root: p11[0].map { Double($0.bytesPerConnection) }, nio: p11[1].map { Double($0.bytesPerConnection) },
                decimals: 0, goal: 1.0, lowerIsBetter: true))
        rows.append(
            Row(
                figure: "P11: server RSS with \(options.sessions) sessions bound (KiB)",
                root: p11[0].map { Double($0.boundKiB) }, nio: p11[1].map { Double($0.boundKiB) }, decimals: 0,
                goal: nil, lowerIsBetter: true))
        rows.append(
            Row(
                figure: "P11: one changeset to all \(options.sessions) connections (ms)",
                root: p11[0].flatMap { Double($0.fanOutMilliseconds) },
                nio: p11[1].flatMap { Double($0.fanOutMilliseconds) },
                decimals: 1, goal: 1.2, lowerIsBetter: true))

        let p12 = await eachSide("P12") { try await SideBySideP12.latencies(server: $0, samples: 300) }
        rows.append(
            Row(
                figure: "P12: write → another app, 1 KiB at 100/s, p50 (ms)", root: p12[0]?.p50Milliseconds,
                nio: p12[1]?.p50Milliseconds, decimals: 2, goal: 1.2, lowerIsBetter: true))
        rows.append(
            Row(
                figure: "P12: write → another app, p99 (ms)", root: p12[0]?.p99Milliseconds,
                nio: p12[1]?.p99Milliseconds, decimals: 2, goal: 1.2, lowerIsBetter: true))

        for connections in options.echoConnections {
            let echo = await eachSide("ping/pong \(connections)") {
                try await PingEcho.run(
                    server: $0, connections: connections, window: options.echoWindow, seconds: options.echoSeconds)
            }
            rows.append(
                Row(
                    figure:
                        "WebSocket ping → pong, \(connections) connections × \(options.echoWindow) in flight (pongs/s)",
                    root: echo[0]?.pongsPerSecond, nio: echo[1]?.pongsPerSecond, decimals: 0, goal: 0.8,
                    lowerIsBetter: false))
            rows.append(
                Row(
                    figure: "… the server's CPU time per pong (µs)", root: echo[0]?.serverMicrosecondsPerPong,
                    nio: echo[1]?.serverMicrosecondsPerPong, decimals: 2, goal: 1.2, lowerIsBetter: true))
        }

        print("")
        print(
            "sync-server beside sync-server-nio, \(ISO8601DateFormatter().string(from: started)), \(ProcessInfo.processInfo.activeProcessorCount) cores"
        )
        print("load average before: \(loadBefore); after: \(loadAverage())")
        print("")
        print("| figure | sync-server | sync-server-nio | root ÷ NIO | goal for the root |")
        print("|---|---:|---:|---:|---|")
        for row in rows { print(row.markdown) }
        if let root = p11[0], let nio = p11[1] {
            print("")
            print("P11 idle RSS: sync-server \(root.idleKiB) KiB, sync-server-nio \(nio.idleKiB) KiB")
        }
    }

    struct DeadlinePassed: Error, CustomStringConvertible {
        var description: String { "not finished within the deadline: abandoned" }
    }

    /// `body`'s result, or `DeadlinePassed` once `deadline` has passed (`body` is then cancelled and
    /// left to end on its own).
    static func withDeadline<Value: Sendable>(
        _ deadline: Duration, _ body: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        let outcome = Locked<CheckedContinuation<Value, any Error>?>(nil)
        let finish: @Sendable (Result<Value, any Error>) -> Void = { result in
            outcome.withLock { continuation in
                continuation?.resume(with: result)
                continuation = nil
            }
        }
        return try await withCheckedThrowingContinuation { continuation in
            outcome.withLock { $0 = continuation }
            let work = Task {
                do { finish(.success(try await body())) } catch { finish(.failure(error)) }
            }
            Task {
                try? await Task.sleep(for: deadline)
                work.cancel()
                finish(.failure(DeadlinePassed()))
            }
        }
    }

    static func loadAverage() -> String {
        (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?
            .split(separator: " ").prefix(3).joined(separator: " ") ?? "?"
    }
}
