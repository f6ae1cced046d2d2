import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One server under test in the side-by-side run: a child process started as
/// `EXECUTABLE --port 0 --host 127.0.0.1 --data DIR --log-level error`, on loopback with a durable file
/// store of its own, its port read from the `… listening on ws://127.0.0.1:PORT …` line it prints.
final class ServerProcess: @unchecked Sendable {
    // @unchecked Sendable: `process` is only started and signalled; the rest is immutable.
    struct StartFailed: Error, CustomStringConvertible { var description: String }

    let name: String
    let port: Int
    let dataDirectory: URL
    private let process: Process
    var pid: Int32 { process.processIdentifier }

    private init(name: String, port: Int, dataDirectory: URL, process: Process) {
        self.name = name
        self.port = port
        self.dataDirectory = dataDirectory
        self.process = process
    }

    /// Starts `executable` on a new data directory and waits (at most 60 s) for its URL line.
    static func start(name: String, executable: String) async throws -> ServerProcess {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "side-by-side-\(name)-\(UUID().uuidString)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["--port", "0", "--host", "127.0.0.1", "--data", directory.path, "--log-level", "error"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let reader = output.fileHandleForReading
        // The first line, read on a thread of its own; the rest of the output is drained there too.
        let firstLine = await onOwnThread(deadline: .seconds(60)) { () -> String in
            var bytes = Data()
            while true {
                let byte = reader.readData(ofLength: 1)
                if byte.isEmpty || byte.first == 10 { break }
                bytes.append(byte)
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        Thread.detachNewThread { while !reader.availableData.isEmpty {} }
        guard let line = firstLine, let range = line.range(of: "ws://127.0.0.1:") else {
            process.terminate()
            throw StartFailed(description: "\(name) printed no URL line: \(firstLine ?? "(nothing in 60 s)")")
        }
        let port = Int(line[range.upperBound...].prefix { $0.isNumber })!
        return ServerProcess(name: name, port: port, dataDirectory: directory, process: process)
    }

    /// The server's resident set size now, in bytes.
    func residentSetBytes() -> Int { residentBytes(pid: pid) }

    /// CPU time the server used so far (user + system), from /proc/PID/stat.
    func cpuSeconds() -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return 0 }
        // After "pid (comm)": field 3 is the state; utime and stime are fields 14 and 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        let ticks = (Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// SIGTERM, then waits for the exit (SIGKILL after 30 s) and removes the data directory.
    func stop() async {
        let process = self.process
        process.terminate()
        let exited = await onOwnThread(deadline: .seconds(30)) { () -> Bool in
            process.waitUntilExit()
            return true
        }
        if exited == nil {
            kill(pid, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: dataDirectory)
    }
}

/// Runs blocking `body` on a thread of its own (never on the cooperative pool); `nil` if it did not
/// return within `deadline` (it then runs on, its result dropped).
func onOwnThread<Result: Sendable>(
    deadline: Duration, _ body: @escaping @Sendable () -> Result
) async -> Result? {
    let outcome = Locked<(result: Result?, continuation: CheckedContinuation<Result?, Never>?, done: Bool)>(
        (nil, nil, false))
    return await withCheckedContinuation { continuation in
        outcome.withLock { $0.continuation = continuation }
        let finish: @Sendable (Result?) -> Void = { result in
            let waiting = outcome.withLock { state -> CheckedContinuation<Result?, Never>? in
                if state.done { return nil }
                state.done = true
                return state.continuation
            }
            waiting?.resume(returning: result)
        }
        Thread.detachNewThread { finish(body()) }
        DispatchQueue.global().asyncAfter(deadline: .now() + milliseconds(deadline) / 1000) { finish(nil) }
    }
}
