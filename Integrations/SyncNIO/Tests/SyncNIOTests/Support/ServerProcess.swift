import Foundation

/// A `sync-server-nio` child process for tests: started with pipes, its URL read from the first line of
/// its output (with a deadline), stopped with a signal.
final class ServerProcess: @unchecked Sendable {
    // @unchecked Sendable: the output is locked; `process` is used from the test's task only.

    let process = Process()
    private let lock = NSLock()
    private var stdoutData = Data()
    private var stderrData = Data()

    /// The built executable beside the test bundle (the test target depends on it).
    static var executable: URL {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let beside = directory.appendingPathComponent("sync-server-nio")
        if FileManager.default.fileExists(atPath: beside.path) { return beside }
        return directory.deletingLastPathComponent().appendingPathComponent("sync-server-nio")
    }

    /// - Parameter signalOnURL: A signal sent from the thread that reads standard output the moment the
    ///   URL line arrives (before the test even sees it).
    init(_ arguments: [String], signalOnURL: Int32? = nil) throws {
        process.executableURL = Self.executable
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Each pipe is read to its end by a thread of its own, with blocking reads: a `readabilityHandler`
        // installs a Dispatch read source whose teardown can crash libdispatch's event loop on Linux
        // (swift-corelibs-libdispatch #949; seen here in CI).
        Self.readToEnd(output.fileHandleForReading) { [weak self] chunk in
            guard let self else { return }
            let sawURL = lock.withLock { () -> Bool in
                let before = stdoutData.contains(Self.urlMarker)
                stdoutData.append(chunk)
                return !before && stdoutData.contains(Self.urlMarker)
            }
            if sawURL, let signalOnURL { kill(process.processIdentifier, signalOnURL) }
        }
        Self.readToEnd(errors.fileHandleForReading) { [weak self] chunk in
            guard let self else { return }
            lock.withLock { stderrData.append(chunk) }
        }
    }

    /// Reads `handle` on a new thread until the end of the stream, passing each chunk to `received`.
    private static func readToEnd(_ handle: FileHandle, received: @escaping @Sendable (Data) -> Void) {
        let thread = Thread {
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                received(chunk)
            }
        }
        thread.stackSize = 256 * 1024
        thread.start()
    }

    private static let urlMarker = Data("listening on ".utf8)

    var stdout: String { lock.withLock { String(decoding: stdoutData, as: UTF8.self) } }
    var stderr: String { lock.withLock { String(decoding: stderrData, as: UTF8.self) } }

    /// Waits until standard output or error (`standardError`) contains `text` — what a process wrote just
    /// before it exited may still be on its way through the pipe — and returns whether it did within
    /// `deadline` (scaled for the build, as `eventually` scales it).
    func printed(_ text: String, standardError: Bool = false, deadline: Duration = .seconds(10)) async -> Bool {
        do {
            try await eventually(
                "\(standardError ? "standard error" : "standard output") to contain \(text)", limit: deadline
            ) {
                (standardError ? stderr : stdout).contains(text)
            }
            return true
        } catch {
            return false
        }
    }

    /// The port from the `ws://host:port` or `wss://host:port` URL the server printed, waiting at most `deadline`.
    func port(deadline: Duration = .seconds(60)) async throws -> Int {
        var port: Int?
        try await eventually("a URL from sync-server-nio", limit: deadline) {
            if let match = stdout.firstMatch(of: /wss?:\/\/[^:\s]+:(\d+)/), let found = Int(match.1) {
                port = found
                return true
            }
            guard process.isRunning else { throw TimedOut(what: "a URL: sync-server-nio exited: \(stderr)") }
            return false
        }
        guard let port else { throw TimedOut(what: "a URL from sync-server-nio: \(stdout) \(stderr)") }
        return port
    }

    /// Sends `signal` and waits (at most `deadline`) for the exit; its status.
    func stop(_ signal: Int32, deadline: Duration = .seconds(60)) async throws -> Int32 {
        kill(process.processIdentifier, signal)
        return try await waitForExit(deadline: deadline)
    }

    func waitForExit(deadline: Duration = .seconds(60)) async throws -> Int32 {
        do {
            try await eventually("sync-server-nio to exit", limit: deadline) { !process.isRunning }
        } catch {
            process.terminate()
            throw error
        }
        // The process has exited: this returns at once.
        process.waitUntilExit()
        return process.terminationStatus
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}
