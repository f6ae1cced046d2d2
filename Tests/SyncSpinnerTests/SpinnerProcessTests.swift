import Foundation
import Testing

@testable import SyncSpinnerKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The built `sync-spinner` run as a real subprocess, without a terminal (its output goes to pipes).
@Suite("sync-spinner as a subprocess", .timeLimit(.minutes(3)))
struct SpinnerProcessTests {
    @Test("a run without a terminal: exit 0, the summary, and no escape byte anywhere")
    func plainRun() throws {
        let run = try SpinnerProcess.run(["--changesets", "50", "--size", "2000000"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("synced 50 changesets, 2.0 MB in "))
        #expect(run.stdout.contains("the reader holds exactly what the writer wrote"))
        #expect(!run.stdout.contains("\u{1B}") && !run.stderr.contains("\u{1B}"))
    }

    @Test("--offline-for 1: the writer's connection goes disconnected → connecting → connected, then catches up")
    func offline() throws {
        let run = try SpinnerProcess.run(["--offline-for", "1", "--changesets", "20", "--size", "200000"])
        #expect(run.status == 0, "\(run.stderr)")
        let writerStates = run.stdout.split(separator: "\n").compactMap { line -> String? in
            line.hasPrefix("writer: ") ? String(line.dropFirst("writer: ".count)) : nil
        }
        // The last disconnection (the offline period) is followed by connecting, then connected.
        let lastDisconnected = try #require(writerStates.lastIndex(of: "disconnected"))
        #expect(Array(writerStates[lastDisconnected...]) == ["disconnected", "connecting", "connected"])
        #expect(run.stdout.contains("synced 20 changesets"))
    }

    @Test(
        "an unknown option or a bad value: usage on stderr, nothing on stdout, exit 64",
        arguments: [
            ["--bogus"], ["--changesets"], ["--changesets", "zero"], ["--timeout", "-1"], ["--server", "http://x:1"],
            ["--changesets", "10", "--size", "5"], ["--log-level", "loud"],
        ])
    func badUsage(arguments: [String]) throws {
        let run = try SpinnerProcess.run(arguments)
        #expect(run.status == 64)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.contains("usage: sync-spinner"))
    }

    @Test("--help lists every option with its default and exits 0")
    func help() throws {
        let run = try SpinnerProcess.run(["--help"])
        #expect(run.status == 0)
        for option in [
            "--changesets", "--size", "--seed", "--offline-for", "--timeout", "--keep", "--server", "--api-key",
            "--log-level", "--help",
        ] {
            #expect(run.stdout.contains(option), "\(option)")
        }
        #expect(run.stdout.components(separatedBy: "(default:").count - 1 >= 9)
    }

    @Test("--server: syncs through a running sync-server over WebSocket, with an API key, and exits 0")
    func throughSyncServer() throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("spinner-server-\(UUID())")
        defer { try? FileManager.default.removeItem(at: data) }
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        let keys = data.appendingPathComponent("keys")
        try "spinner-key sync-spinner/*\n".write(to: keys, atomically: true, encoding: .utf8)
        let server = Process()
        server.executableURL = SpinnerProcess.executable.deletingLastPathComponent().appendingPathComponent(
            "sync-server")
        server.arguments = ["--port", "0", "--data", data.appendingPathComponent("logs").path, "--api-keys", keys.path]
        let output = Pipe()
        server.standardOutput = output
        try server.run()
        defer {
            kill(server.processIdentifier, SIGTERM)
            server.waitUntilExit()
        }
        // The first line names the port (a blocking read: the server prints it at once or fails).
        var line = Data()
        while !line.contains(10) {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self)
        let port = try #require(text.firstMatch(of: /ws:\/\/127\.0\.0\.1:(\d+)/).map { String($0.1) }, "\(text)")
        let run = try SpinnerProcess.run([
            "--server", "ws://127.0.0.1:\(port)", "--api-key", "spinner-key", "--changesets", "30", "--size", "1000000",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("through ws://127.0.0.1:\(port)") || run.stdout.contains("ws://127.0.0.1:\(port)"))
        #expect(run.stdout.contains("the reader holds exactly what the writer wrote"))
    }

    @Test("an unreachable server is a clear error and exit 1 within --timeout")
    func unreachableServer() throws {
        let port = try closedPort()
        let run = try SpinnerProcess.run(["--server", "ws://127.0.0.1:\(port)", "--timeout", "3", "--changesets", "5"])
        #expect(run.status == 1)
        #expect(run.stderr.contains("timed out after 3.0 s"))
        #expect(run.stderr.contains("connection failed"))
    }

    @Test("SIGINT and SIGTERM: what was synced so far, exit 130 and 143", arguments: [[SIGINT, 130], [SIGTERM, 143]])
    func interrupted(signalAndStatus: [Int32]) throws {
        let (signal, status) = (signalAndStatus[0], signalAndStatus[1])
        let run = try SpinnerProcess.run(["--offline-for", "60", "--changesets", "5"], signalAfterFirstLine: signal)
        #expect(run.status == status)
        #expect(run.stderr.contains("interrupted: the reader holds 0 of 5 changesets"))
    }

    @Test("--keep keeps the directory and says where")
    func keep() throws {
        let kept = try SpinnerProcess.run(["--keep", "--changesets", "3", "--size", "3000"])
        #expect(kept.status == 0)
        let line = try #require(kept.stderr.split(separator: "\n").first { $0.hasPrefix("sync-spinner: kept ") })
        let path = String(line.dropFirst("sync-spinner: kept ".count))
        #expect(FileManager.default.fileExists(atPath: path))
        try FileManager.default.removeItem(atPath: path)
    }

    @Test(
        "on a terminal: one line redrawn in place, cursor hidden while drawing and shown at exit, never wider than the terminal"
    )
    func terminalMode() throws {
        // `script` gives the spinner a pseudo-terminal (80 columns here) and records what it wrote.
        let transcript = FileManager.default.temporaryDirectory.appendingPathComponent("spinner-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: transcript) }
        let command = "stty cols 60; \(SpinnerProcess.executable.path) --changesets 40 --size 4000000 --offline-for 0.5"
        let run = try SpinnerProcess.run(
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

    /// A loopback port nothing listens on: bound, then closed.
    private func closedPort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        try #require(bound)
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// Runs the built `sync-spinner` with pipes for its output and a generous deadline.
enum SpinnerProcess {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    struct TimedOut: Error {}

    /// The executable next to the test bundle (`swift build --build-tests` builds it: the test target
    /// depends on it).
    static var executable: URL {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let beside = directory.appendingPathComponent("sync-spinner")
        if FileManager.default.fileExists(atPath: beside.path) { return beside }
        return directory.deletingLastPathComponent().appendingPathComponent("sync-spinner")
    }

    static func run(
        _ arguments: [String],
        executable: URL = SpinnerProcess.executable,
        signalAfterFirstLine signal: Int32? = nil,
        deadline: Duration = .seconds(120)
    ) throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["NO_COLOR"] = nil
        process.environment = environment
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        let collected = OutputCollector()
        output.fileHandleForReading.readabilityHandler = { handle in collected.append(handle.availableData, to: .stdout)
        }
        errors.fileHandleForReading.readabilityHandler = { handle in collected.append(handle.availableData, to: .stderr)
        }
        try process.run()
        let start = ContinuousClock.now
        var signalled = false
        while process.isRunning {
            if ContinuousClock.now - start > deadline {
                process.terminate()
                throw TimedOut()
            }
            if let signal, !signalled, collected.stdoutLineCount >= 2 {
                kill(process.processIdentifier, signal)
                signalled = true
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
        process.waitUntilExit()
        output.fileHandleForReading.readabilityHandler = nil
        errors.fileHandleForReading.readabilityHandler = nil
        collected.append(output.fileHandleForReading.readDataToEndOfFile(), to: .stdout)
        collected.append(errors.fileHandleForReading.readDataToEndOfFile(), to: .stderr)
        return Result(status: process.terminationStatus, stdout: collected.stdout, stderr: collected.stderr)
    }
}

/// Output gathered from the readability handlers' threads.
final class OutputCollector: @unchecked Sendable {
    // @unchecked Sendable: every access goes through `lock`.
    enum Stream { case stdout, stderr }

    private let lock = NSLock()
    private var stdoutData = Data()
    private var stderrData = Data()

    func append(_ chunk: Data, to stream: Stream) {
        lock.withLock {
            switch stream {
            case .stdout: stdoutData.append(chunk)
            case .stderr: stderrData.append(chunk)
            }
        }
    }

    var stdout: String { lock.withLock { String(decoding: stdoutData, as: UTF8.self) } }
    var stderr: String { lock.withLock { String(decoding: stderrData, as: UTF8.self) } }
    var stdoutLineCount: Int { lock.withLock { stdoutData.filter { $0 == 10 }.count } }
}
