import Foundation

/// A `sync-server` child process for tests: started with pipes, its URL read from the first line of its
/// output (with a deadline), stopped with a signal.
final class ServerProcess: @unchecked Sendable {
    // @unchecked Sendable: `output` is locked; `process` is used from the test's task only.

    struct TimedOut: Error, CustomStringConvertible {
        var description: String
    }

    let process = Process()
    private let lock = NSLock()
    private var stdoutData = Data()
    private var stderrData = Data()

    /// The built executable beside the test bundle (the test target depends on it).
    static var executable: URL {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let beside = directory.appendingPathComponent("sync-server")
        if FileManager.default.fileExists(atPath: beside.path) { return beside }
        return directory.deletingLastPathComponent().appendingPathComponent("sync-server")
    }

    init(_ arguments: [String]) throws {
        process.executableURL = Self.executable
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        output.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let chunk = handle.availableData
            self?.lock.withLock { self?.stdoutData.append(chunk) }
        }
        errors.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let chunk = handle.availableData
            self?.lock.withLock { self?.stderrData.append(chunk) }
        }
        try process.run()
    }

    var stdout: String { lock.withLock { String(decoding: stdoutData, as: UTF8.self) } }
    var stderr: String { lock.withLock { String(decoding: stderrData, as: UTF8.self) } }

    /// The port from the `ws://host:port` URL the server printed, waiting at most `deadline`.
    func port(deadline: Duration = .seconds(60)) async throws -> Int {
        let start = ContinuousClock.now
        while ContinuousClock.now - start < deadline {
            if let match = stdout.firstMatch(of: /ws:\/\/[^:\s]+:(\d+)/), let port = Int(match.1) { return port }
            guard process.isRunning else { throw TimedOut(description: "sync-server exited: \(stderr)") }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw TimedOut(description: "sync-server printed no URL: \(stdout) \(stderr)")
    }

    /// Sends `signal` and waits (at most `deadline`) for the exit; its status.
    func stop(_ signal: Int32, deadline: Duration = .seconds(60)) async throws -> Int32 {
        kill(process.processIdentifier, signal)
        return try await waitForExit(deadline: deadline)
    }

    func waitForExit(deadline: Duration = .seconds(60)) async throws -> Int32 {
        let start = ContinuousClock.now
        while process.isRunning {
            guard ContinuousClock.now - start < deadline else {
                process.terminate()
                throw TimedOut(description: "sync-server did not exit")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        process.waitUntilExit()
        return process.terminationStatus
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}
