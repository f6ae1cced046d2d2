import Foundation
import TestSupport
import Testing

@testable import SyncSpinnerKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The built `sync-spinner` run as a real subprocess, without a terminal (its output goes to pipes).
@Suite("sync-spinner as a subprocess", .timeLimit(.minutes(5)))
struct SpinnerProcessTests {
    @Test("a run without a terminal: exit 0, the summary, and no escape byte anywhere")
    func plainRun() async throws {
        let run = try await SpinnerProcess.run(["--changesets", "50", "--size", "2000000"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("synced 50 changesets, 2.0 MB in "))
        #expect(run.stdout.contains("the reader holds exactly what the writer wrote"))
        #expect(!run.stdout.contains("\u{1B}") && !run.stderr.contains("\u{1B}"))
        // The last progress line and the summary give the same time, counted from the same start.
        let last = try #require(run.stdout.firstMatch(of: #/\n(\d+\.\d+) s  ✓ /#)?.1, "\(run.stdout)")
        let summary = try #require(run.stdout.firstMatch(of: #/MB in (\d+\.\d+) s \(/#)?.1, "\(run.stdout)")
        #expect(last == summary)
    }

    @Test("--offline-for 1: the writer's connection goes disconnected → connecting → connected, then catches up")
    func offline() async throws {
        let run = try await SpinnerProcess.run(["--offline-for", "1", "--changesets", "20", "--size", "200000"])
        #expect(run.status == 0, "\(run.stderr)")
        let writerStates = run.stdout.split(separator: "\n").compactMap { line -> String? in
            line.hasPrefix("writer: ") ? String(line.dropFirst("writer: ".count)) : nil
        }
        // Opened suspended: it never connects before the offline period ends, then once, cleanly.
        #expect(writerStates == ["disconnected", "connecting", "connected"])
        #expect(run.stdout.contains("synced 20 changesets"))
    }

    @Test(
        "an unknown option or a bad value: usage on stderr, nothing on stdout, exit 64",
        arguments: [
            ["--bogus"], ["--changesets"], ["--changesets", "zero"], ["--timeout", "-1"], ["--server", "http://x:1"],
            ["--changesets", "10", "--size", "5"], ["--log-level", "loud"],
        ])
    func badUsage(arguments: [String]) async throws {
        let run = try await SpinnerProcess.run(arguments)
        #expect(run.status == 64)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.contains("usage: sync-spinner"))
    }

    @Test("--help lists every option with its default and exits 0")
    func help() async throws {
        let run = try await SpinnerProcess.run(["--help"])
        #expect(run.status == 0)
        for option in [
            "--changesets", "--size", "--seed", "--offline-for", "--timeout", "--keep", "--server", "--api-key",
            "--log-level", "--help",
        ] {
            #expect(run.stdout.contains(option), "\(option)")
        }
        #expect(run.stdout.components(separatedBy: "(default:").count - 1 >= 9)
    }

    /// A `sync-server` with a keys file allowing `spinner-key` to sync `sync-spinner/*`, and its port.
    func keyedServer(_ data: URL) async throws -> (ChildProcess, Int) {
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        let keys = data.appendingPathComponent("keys")
        try "spinner-key sync-spinner/*\n".write(to: keys, atomically: true, encoding: .utf8)
        let server = try ChildProcess(
            syncServer: ["--port", "0", "--data", data.appendingPathComponent("logs").path, "--api-keys", keys.path])
        do {
            return (server, try await server.port())
        } catch {
            _ = try? await server.stop(SIGKILL)
            throw error
        }
    }

    @Test("--server: syncs through a running sync-server over WebSocket, with an API key, and exits 0")
    func throughSyncServer() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("spinner-server-\(UUID())")
        defer { try? FileManager.default.removeItem(at: data) }
        let (server, port) = try await keyedServer(data)
        // The server is stopped whatever happened to the run.
        let run: Swift.Result<SpinnerProcess.Result, any Error>
        do {
            run = .success(
                try await SpinnerProcess.run([
                    "--server", "ws://127.0.0.1:\(port)", "--api-key", "spinner-key", "--changesets", "30", "--size",
                    "1000000",
                ]))
        } catch {
            run = .failure(error)
        }
        #expect(try await server.stop(SIGTERM) == 0)
        let result = try run.get()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("through ws://127.0.0.1:\(port)"))
        #expect(result.stdout.contains("the reader holds exactly what the writer wrote"))
    }

    @Test(
        "a fatal sync error (an API key the server refuses) prints the typed error and exits 1, long before --timeout")
    func fatalSyncError() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("spinner-server-\(UUID())")
        defer { try? FileManager.default.removeItem(at: data) }
        let (server, port) = try await keyedServer(data)
        let run: Swift.Result<SpinnerProcess.Result, any Error>
        do {
            run = .success(
                try await SpinnerProcess.run(
                    [
                        "--server", "ws://127.0.0.1:\(port)", "--api-key", "not-a-key", "--changesets", "5",
                        "--timeout",
                        "600",
                    ], deadline: .seconds(60)))
        } catch {
            run = .failure(error)
        }
        #expect(try await server.stop(SIGTERM) == 0)
        let result = try run.get()
        #expect(result.status == 1)
        #expect(result.stderr.contains("failed: authentication failed"), "\(result.stderr)")
        #expect(!result.stderr.contains("timed out"))
        #expect(!result.stdout.contains("synced"))
    }

    @Test("an unreachable server is a clear error and exit 1 within --timeout")
    func unreachableServer() async throws {
        // A port held bound but not listening (so no other process can take it): connections are refused.
        let reserved = try ReservedPort()
        // 3 s, scaled under a sanitizer: the spinner's own start-up there takes part of its --timeout.
        let timeout = 3 * Int(BuildFlavor.deadlineScale)
        let run = try await SpinnerProcess.run([
            "--server", "ws://127.0.0.1:\(reserved.port)", "--timeout", "\(timeout)", "--changesets", "5",
        ])
        #expect(run.status == 1)
        #expect(run.stderr.contains("timed out after \(timeout).0 s"), "\(run.stderr)")
        #expect(run.stderr.contains("connection failed"))
        withExtendedLifetime(reserved) {}
    }

    @Test("SIGINT and SIGTERM: what was synced so far, exit 130 and 143", arguments: [[SIGINT, 130], [SIGTERM, 143]])
    func interrupted(signalAndStatus: [Int32]) async throws {
        let (signal, status) = (signalAndStatus[0], signalAndStatus[1])
        let run = try await SpinnerProcess.run(
            ["--offline-for", "60", "--changesets", "5"],
            trigger: ChildProcess.SignalTrigger(signal) { $0.count { $0 == "\n" } >= 2 })
        #expect(run.status == status)
        #expect(run.stderr.contains("interrupted: the reader holds 0 of 5 changesets"))
    }

    @Test("--keep keeps the directory and says where")
    func keep() async throws {
        let kept = try await SpinnerProcess.run(["--keep", "--changesets", "3", "--size", "3000"])
        #expect(kept.status == 0)
        let line = try #require(kept.stderr.split(separator: "\n").first { $0.hasPrefix("sync-spinner: kept ") })
        let path = String(line.dropFirst("sync-spinner: kept ".count))
        #expect(FileManager.default.fileExists(atPath: path))
        try FileManager.default.removeItem(atPath: path)
    }

    @Test(
        "on a terminal: one line redrawn in place, cursor hidden while drawing and shown at exit, never wider than the terminal"
    )
    func terminalMode() async throws {
        // `script` gives the spinner a pseudo-terminal (80 columns here) and records what it wrote.
        let transcript = FileManager.default.temporaryDirectory.appendingPathComponent("spinner-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: transcript) }
        let command = "stty cols 60; \(SpinnerProcess.executable.path) --changesets 40 --size 4000000 --offline-for 0.5"
        let run = try await SpinnerProcess.run(
            ["-qec", command, transcript.path], executable: URL(fileURLWithPath: "/usr/bin/script"))
        #expect(run.status == 0, "\(run.stderr)")
        let output = String(decoding: try Data(contentsOf: transcript), as: UTF8.self)
        let hide = try #require(output.range(of: "\u{1B}[?25l"))
        let show = try #require(output.range(of: "\u{1B}[?25h", options: .backwards))
        #expect(hide.upperBound <= show.lowerBound)
        #expect(output.contains("\r\u{1B}[2K"))
        #expect(output.contains("\u{1B}[32m"))  // colour: TERM is not dumb and NO_COLOR is unset
        // Every redraw of the status line (the segments not ended by a newline: those are printed lines,
        // the header and the summary) fits in 59 visible columns.
        var redraws = 0
        for segment in output.components(separatedBy: "\u{1B}[2K").dropFirst() {
            let line = segment.components(separatedBy: "\r").first ?? ""
            guard !line.contains("\n") else { continue }
            redraws += 1
            #expect(StatusLine.visibleWidth(line.replacingOccurrences(of: "\u{1B}[?25h", with: "")) <= 59, "\(line)")
        }
        #expect(redraws > 1)
        #expect(output.contains("synced 40 changesets"))
    }

    @Test("on a terminal resized while it runs (SIGWINCH): the line is redrawn to the new width")
    func resize() async throws {
        // `script` gives the spinner a pseudo-terminal 60 columns wide; once the transcript shows the spinner
        // drawing (it hides the cursor first: ESC [?25l, made with printf so that the command line that script
        // copies into the transcript does not match), `stty cols 40` resizes it, and the terminal's
        // foreground processes (the spinner) get SIGWINCH.
        let transcript = FileManager.default.temporaryDirectory.appendingPathComponent("spinner-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: transcript) }
        let command = """
            stty cols 60; \(SpinnerProcess.executable.path) --changesets 40 --size 4000000 --offline-for 3 & \
            p=$(printf '\\033[?25l'); i=0; until grep -qF "$p" '\(transcript.path)' 2>/dev/null || [ $i -ge 1200 ]; \
            do sleep 0.05; \
            i=$((i+1)); done; stty cols 40; wait $!
            """
        let run = try await SpinnerProcess.run(
            ["-qefc", command, transcript.path], executable: URL(fileURLWithPath: "/usr/bin/script"))
        #expect(run.status == 0, "\(run.stderr)")
        let output = String(decoding: try Data(contentsOf: transcript), as: UTF8.self)
        // The visible width of each redraw of the status line, in order.
        let widths = output.components(separatedBy: "\u{1B}[2K").dropFirst().compactMap { segment -> Int? in
            let line = segment.components(separatedBy: "\r").first ?? ""
            guard !line.contains("\n") else { return nil }
            return StatusLine.visibleWidth(line.replacingOccurrences(of: "\u{1B}[?25h", with: ""))
        }
        // The full status line is wider than both: it fits 59 columns (fields dropped), and after the resize
        // 39, never wider again.
        #expect(widths.allSatisfy { $0 <= 59 }, "\(widths)")
        let lastWide = try #require(widths.lastIndex { $0 > 39 }, "a redraw wider than 39 before the resize: \(widths)")
        #expect(lastWide < widths.count - 1, "redraws after the resize: \(widths)")
        #expect(output.contains("synced 40 changesets"))
    }

    /// The checksum in the summary of a successful run.
    private func summaryChecksum(_ run: SpinnerProcess.Result) throws -> String {
        try #require(run.stdout.firstMatch(of: #/\(checksum ([0-9a-f]+)\)/#).map { String($0.1) }, "\(run.stdout)")
    }

    @Test("--seed end to end: two runs with the same seed sync the same workload (the seed's), another seed another")
    func seedEndToEnd() async throws {
        let arguments = ["--changesets", "30", "--size", "300000"]
        let first = try await SpinnerProcess.run(arguments + ["--seed", "7"])
        let second = try await SpinnerProcess.run(arguments + ["--seed", "7"])
        let other = try await SpinnerProcess.run(arguments + ["--seed", "8"])
        for run in [first, second, other] { #expect(run.status == 0, "\(run.stderr)") }
        #expect(first.stdout.contains("(seed 7)") && other.stdout.contains("(seed 8)"))
        // What the reader received, as the summary's checksum: the workload that seed defines, each time.
        var expected = ChangesetChecksum()
        let workload = Workload(count: 30, totalBytes: 300_000, seed: 7)
        for index in 0..<30 { expected.add(workload.changeset(index)) }
        #expect(try summaryChecksum(first) == "\(expected)")
        #expect(try summaryChecksum(second) == "\(expected)")
        #expect(try summaryChecksum(other) != "\(expected)")
    }

    @Test(
        "--timeout expiring mid-sync (the server stopped once part of the workload arrived): exit 1, what the reader holds"
    )
    func timeoutMidSync() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("spinner-server-\(UUID())")
        defer { try? FileManager.default.removeItem(at: data) }
        let (server, port) = try await keyedServer(data)
        defer { kill(server.processIdentifier, SIGCONT) }
        let count = 200
        // Long enough for the first progress line even under ThreadSanitizer (the spinner is built with it too).
        let timeout = Int(30 * min(BuildFlavor.deadlineScale, 3))
        // The first progress line (the reader's download has begun; not all of the 40 MB synced) freezes the
        // server at once: SIGSTOP from the thread that reads the spinner's output, as the line arrives.
        let serverID = server.processIdentifier
        let freeze = FreezeOnce()
        let spinner = try ChildProcess(
            SpinnerProcess.executable,
            [
                "--server", "ws://127.0.0.1:\(port)", "--api-key", "spinner-key", "--changesets", "\(count)", "--size",
                "40000000", "--timeout", "\(timeout)",
            ],
            trigger: ChildProcess.SignalTrigger(0) { stdout in
                if stdout.matches(of: #/  \S+ (\d+\.\d)/40\.0 MB/#).contains(where: {
                    Double($0.1).map { $0 < 40 } ?? false
                }) {
                    freeze.stop(serverID)
                }
                return false  // the spinner itself gets no signal
            })
        do {
            try await spinner.waitForOutput("the server frozen mid-sync", deadline: .seconds(60)) { _ in
                freeze.isStopped
            }
        } catch {
            _ = try? await spinner.stop(SIGKILL)
            _ = try? await server.stop(SIGKILL)
            throw error
        }
        let status = try await spinner.waitForExit(deadline: .seconds(timeout + 60))
        kill(server.processIdentifier, SIGCONT)
        #expect(try await server.stop(SIGTERM) == 0)
        #expect(status == 1, "\(spinner.stderr)")
        let held = try #require(
            spinner.stderr.firstMatch(of: #/timed out after (\d+)\.0 s: the reader holds (\d+) of (\d+) changesets/#),
            "\(spinner.stderr)")
        #expect(Int(held.1) == timeout)
        #expect(Int(held.3) == count)
        #expect(Int(held.2).map { $0 < count } == true, "\(spinner.stderr)")
        #expect(!spinner.stdout.contains("synced \(count) changesets"))
    }

    /// Sends SIGSTOP to a process once.
    private final class FreezeOnce: @unchecked Sendable {
        // @unchecked Sendable: `stopped` is only touched under `lock`.
        private let lock = NSLock()
        private var stopped = false

        var isStopped: Bool { lock.withLock { stopped } }

        func stop(_ process: Int32) {
            lock.withLock {
                guard !stopped else { return }
                stopped = kill(process, SIGSTOP) == 0
            }
        }
    }
}

/// Runs the built `sync-spinner` (or another executable) as a child process with pipes for its output,
/// waiting for it with a deadline, off the cooperative pool (see `ChildProcess`).
enum SpinnerProcess {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// The executable next to the test bundle (`swift build --build-tests` builds it: the test target
    /// depends on it).
    static var executable: URL { ChildProcess.built("sync-spinner") }

    /// Runs `executable` with `arguments` in this process's environment without `NO_COLOR` (plus
    /// `environment`), and returns how it ended once it exited, at most `deadline` from now.
    static func run(
        _ arguments: [String],
        executable: URL = SpinnerProcess.executable,
        environment: [String: String] = [:],
        trigger: ChildProcess.SignalTrigger? = nil,
        deadline: Duration = .seconds(120)
    ) async throws -> Result {
        var inherited = ProcessInfo.processInfo.environment
        inherited["NO_COLOR"] = nil
        inherited.merge(environment) { $1 }
        let child = try ChildProcess(executable, arguments, environment: inherited, trigger: trigger)
        let status = try await child.waitForExit(deadline: deadline)
        return Result(status: status, stdout: child.stdout, stderr: child.stderr)
    }
}
