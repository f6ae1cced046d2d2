import Foundation

/// P11 against a server process: `sessions` connections, each with one bound session (the clients are
/// `network p11-clients PORT N`, a child process of their own); the server's RSS growth per connection
/// from /proc, and the time for one changeset to reach every connection.
enum SideBySideP11 {
    struct Figure {
        var idleKiB: Int
        var boundKiB: Int
        var bytesPerConnection: Int
        var fanOutMilliseconds: String
    }

    static func residentBytesPerConnection(server: ServerProcess, sessions: Int) async throws -> Figure {
        let idle = server.residentSetBytes()
        let clients = Process()
        clients.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        clients.arguments = ["p11-clients", "\(server.port)", "\(sessions)"]
        let output = Pipe()
        let input = Pipe()
        clients.standardOutput = output
        clients.standardInput = input
        try clients.run()
        defer { if clients.isRunning { clients.terminate() } }
        let reader = output.fileHandleForReading
        let nextLine: @Sendable () -> String = {
            var bytes = Data()
            while true {
                let byte = reader.readData(ofLength: 1)
                if byte.isEmpty || byte.first == 10 { return String(decoding: bytes, as: UTF8.self) }
                bytes.append(byte)
            }
        }
        let ready = await onOwnThread(deadline: .seconds(180), nextLine) ?? "(nothing in 180 s)"
        guard ready.hasSuffix("ms") else {
            throw ServerProcess.StartFailed(description: "the P11 clients did not all bind: \(ready)")
        }
        print("    \(server.name): \(ready)")
        let bound = server.residentSetBytes()
        input.fileHandleForWriting.write(Data("go\n".utf8))
        let fanOut = await onOwnThread(deadline: .seconds(180), nextLine) ?? "(no answer in 180 s)"
        print("    \(server.name): one changeset \(fanOut)")
        _ = await onOwnThread(deadline: .seconds(60)) { clients.waitUntilExit() }
        let milliseconds = fanOut.split(separator: " ").dropLast().last.map(String.init) ?? "?"
        return Figure(
            idleKiB: idle / 1024, boundKiB: bound / 1024, bytesPerConnection: (bound - idle) / sessions,
            fanOutMilliseconds: fanOut.hasPrefix("reached") ? milliseconds : "—")
    }
}
