import Dispatch
import Foundation
import SyncEngine
import SyncServer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// P11: one networked server holding `sessions` bound sessions (one connection each), the clients in a
/// child process; the server's RSS per connection, and the time for one changeset to reach them all.
enum P11 {
    static func run(sessions: Int) async {
        raiseOpenFileLimit()
        do {
            let server = try await SyncServer.listening(configuration: .init(logLevel: .off))
            guard case .webSocket(_, let port) = server.webSocketEndpoint!.kind else { return }
            let before = residentBytes()
            let child = Process()
            child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
            child.arguments = ["p11-clients", "\(port)", "\(sessions)"]
            let output = Pipe()
            let input = Pipe()
            child.standardOutput = output
            child.standardInput = input
            try child.run()
            let reader = output.fileHandleForReading
            func line() -> String {
                var bytes = Data()
                while true {
                    let byte = reader.readData(ofLength: 1)
                    if byte.isEmpty || byte.first == 10 { return String(decoding: bytes, as: UTF8.self) }
                    bytes.append(byte)
                }
            }
            let ready = line()
            let after = residentBytes()
            print("  clients: \(ready)")
            print(
                "  server RSS: \(before / 1024) KiB before, \(after / 1024) KiB with \(sessions) sessions bound → \((after - before) / sessions) bytes per connection (target ≤ 16 KB)"
            )
            input.fileHandleForWriting.write(Data("go\n".utf8))
            print("  one changeset to all: \(line())")
            child.waitUntilExit()
            await server.stop()
        } catch {
            print("  P11 failed: \(error)")
        }
    }
}

/// The child process of P11: `sessions` connections, each bound to the partition; on "go" one of them
/// uploads a changeset and the time until every connection received it is printed.
enum P11Clients {
    static func run(port: Int, sessions: Int) async {
        raiseOpenFileLimit()
        let transport = WebSocketTransport()
        let bound = Locked(0)
        let received = Locked(0)
        let closes = Locked<[String: Int]>([:])
        let allBound = DispatchSemaphore(value: 0)
        let allReceived = DispatchSemaphore(value: 0)
        var connections: [any SyncClientConnection] = []
        let start = ContinuousClock.now
        for index in 0..<sessions {
            let connection = transport.connect(to: .webSocket(host: "127.0.0.1", port: port))
            connections.append(connection)
            Task.detached {
                for await event in connection.events {
                    switch event {
                    case .opened:
                        connection.send(.hello(Hello(credential: .anonymous)))
                        connection.send(
                            .bind(
                                Bind(
                                    sessionID: 1, partition: "p11", clientFileID: UInt64(index + 1),
                                    downloadedVersion: 0)))
                    case .message(.download(let download)):
                        if download.entries.isEmpty {
                            if bound.withLock({
                                $0 += 1; return $0
                            }) == sessions {
                                allBound.signal()
                            }
                        } else if received.withLock({
                            $0 += 1; return $0
                        }) == sessions {
                            allReceived.signal()
                        }
                    case .closed(let error):
                        closes.withLock { $0["\(error.map { "\($0)" } ?? "closed")", default: 0] += 1 }
                    default: break
                    }
                }
            }
            // Pace the connects so the server's accept backlog never overflows, and keep at most 512
            // connections between connect and bound: `sync-server` closes a new connection at once while
            // 1,024 are in their handshake (`WebSocketLimits.maximumHandshakingConnections`), which a
            // burst on a loaded machine reaches (1,260 of 5,000 refused in the first side-by-side run).
            if index % 500 == 499 { try? await Task.sleep(for: .milliseconds(50)) }
            while index + 1 - bound.withLock({ $0 }) >= 512 { try? await Task.sleep(for: .milliseconds(1)) }
        }
        if allBound.wait(timeout: .now() + 120) == .timedOut {
            emit("only \(bound.withLock { $0 }) of \(sessions) bound; connections closed: \(closes.withLock { $0 })")
            exit(1)
        }
        emit("\(sessions) sessions bound in \(format(milliseconds(ContinuousClock.now - start))) ms")
        _ = readLine()
        let sent = ContinuousClock.now
        connections[0].send(
            .upload(Upload(sessionID: 1, changesets: [UploadChangeset(clientVersion: 1, data: [1, 2, 3])])))
        // The uploader gets an acknowledgement instead of the changeset: it counts too (an entry).
        if allReceived.wait(timeout: .now() + 120) == .timedOut {
            emit("only \(received.withLock { $0 }) of \(sessions) received it")
        } else {
            emit("reached all \(sessions) in \(format(milliseconds(ContinuousClock.now - sent))) ms")
        }
        for connection in connections { connection.close() }
    }
}
