import SyncServer
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `SyncServer.listeningForTests(host:port:…)` throws `NetworkError` when it cannot listen, and leaves nothing behind.
@Suite("Listening failures", .timeLimit(.minutes(5)))
struct ListeningFailureTests {
    @Test("a port another server listens on: listening throws bind's EADDRINUSE; the first server keeps serving")
    func portInUse() async throws {
        let first = try await SyncServer.listeningForTests(host: "127.0.0.1", port: 0)
        guard case .webSocket(_, let port)? = first.webSocketEndpoint?.kind else {
            Issue.record("a listening server has no WebSocket endpoint: \(String(describing: first.webSocketEndpoint))")
            return
        }
        do {
            let second = try await SyncServer.listeningForTests(host: "127.0.0.1", port: port)
            Issue.record(
                "a second server listened on port \(port) in use: \(String(describing: second.webSocketEndpoint))")
            await second.stop()
        } catch let error as NetworkError {
            guard case .systemCall(let call, let code) = error else {
                Issue.record("expected a failed system call, got \(error)")
                await first.stop()
                return
            }
            #expect(call == "bind", "\(error)")
            #expect(code == EADDRINUSE, "\(error)")
        }
        // The first server is undisturbed: a client still reaches it.
        let client = try await TestClient.welcomed(
            on: WebSocketTransport.forTests().connect(to: first.webSocketEndpoint!))
        client.close()
        await first.stop()
    }

    @Test("a host that does not resolve: listening throws cannotResolve with that host")
    func unresolvableHost() async throws {
        do {
            let server = try await SyncServer.listeningForTests(host: "no-such-host.invalid", port: 0)
            Issue.record("listened on an unresolvable host: \(String(describing: server.webSocketEndpoint))")
            await server.stop()
        } catch let error as NetworkError {
            guard case .cannotResolve(let host, _) = error else {
                Issue.record("expected cannotResolve, got \(error)")
                return
            }
            #expect(host == "no-such-host.invalid")
        }
    }
}
