import Foundation
import NIOCore
import NIOPosix
import SyncEngine
import SyncNIO
import SyncServer
import TestSupport
import Testing

/// `ws://` with paths, and both stacks against each other: the NIO client with the root package's server,
/// the root package's client with the NIO server.
@Suite(.timeLimit(.minutes(5)))
struct PlainWebSocketTests {
    @Test func aURLPathReachesTheServerAndAnotherPathIsRefused() async throws {
        let server = try await NIOSyncServer.start(serving: try await SyncServer.embedded(), path: "/sync/v1")
        let right = try NIOWebSocketTransport(url: "ws://127.0.0.1:\(server.port)/sync/v1?client=tests")
        let wrong = try NIOWebSocketTransport(url: "ws://127.0.0.1:\(server.port)/other")
        let writer = try await TestApp(right, server: right.endpoint)
        let reader = try await TestApp(right, server: right.endpoint)
        let lost = try await TestApp(wrong, server: wrong.endpoint)
        do {
            _ = try await writer.session.write(Data("with a path".utf8))
            try await eventually("the reader to receive the writer's changeset") { reader.hasReceived("with a path") }
            // The other path is answered 404 (no upgrade): a connection failure, retried.
            try await eventually("the app on the wrong path to report the 404") {
                lost.errors.values.contains {
                    if case .connectionFailed(let reason) = $0.error { reason.contains("404") } else { false }
                }
            }
            #expect(!lost.hasReceived("with a path"))
            #expect(lost.session.state.value == .active)
        } catch {
            Issue.record("\(error); errors: \(writer.errors.values) \(reader.errors.values) \(lost.errors.values)")
        }
        for app in [writer, reader, lost] { await app.close() }
        await server.stop()
    }

    @Test func theNIOClientSyncsWithTheRootServer() async throws {
        let server = try await SyncServer.listening()
        guard case .webSocket(_, let port) = server.webSocketEndpoint?.kind else {
            Issue.record("no endpoint")
            return
        }
        let transport = try NIOWebSocketTransport(url: "ws://127.0.0.1:\(port)/")
        let writer = try await TestApp(transport, server: transport.endpoint)
        let reader = try await TestApp(transport, server: transport.endpoint)
        do {
            _ = try await writer.session.write(Data("NIO to epoll".utf8))
            try await eventually("the reader to receive the writer's changeset") { reader.hasReceived("NIO to epoll") }
        } catch {
            Issue.record("\(error); errors: \(writer.errors.values) \(reader.errors.values)")
        }
        await writer.close()
        await reader.close()
        await server.stop()
    }

    @Test func theRootClientSyncsWithTheNIOServer() async throws {
        let server = try await NIOSyncServer.start(serving: try await SyncServer.embedded())
        let endpoint = SyncEndpoint.webSocket(host: "127.0.0.1", port: server.port)
        let writer = try await TestApp(WebSocketTransport(), server: endpoint)
        let reader = try await TestApp(WebSocketTransport(), server: endpoint)
        do {
            _ = try await writer.session.write(Data("epoll to NIO".utf8))
            try await eventually("the reader to receive the writer's changeset") { reader.hasReceived("epoll to NIO") }
        } catch {
            Issue.record("\(error); errors: \(writer.errors.values) \(reader.errors.values)")
        }
        await writer.close()
        await reader.close()
        await server.stop()
    }

    @Test func aConnectionThatNeverUpgradesIsClosedAfterTheHandshakeTimeout() async throws {
        let server = try await NIOSyncServer.start(
            serving: try await SyncServer.embedded(), handshakeTimeout: .milliseconds(200))
        let silent = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: server.port).get()
        do {
            try await eventually("the server to close a connection that sends nothing") { !silent.isActive }
        } catch {
            Issue.record("\(error)")
            try? await silent.close()
        }
        await server.stop()
    }

    @Test func anUpgradedConnectionSilentForTheIdleTimeoutIsClosedAndTheAppReconnects() async throws {
        let server = try await NIOSyncServer.start(
            serving: try await SyncServer.embedded(), idleTimeout: .milliseconds(300))
        let transport = try NIOWebSocketTransport(url: "ws://127.0.0.1:\(server.port)")
        let app = try await TestApp(transport, server: transport.endpoint)  // pings every 60 s
        do {
            try await eventually("the server to close the idle connection with 1001") {
                app.errors.values.contains {
                    if case .connectionFailed(let reason) = $0.error { reason.contains("1001") } else { false }
                }
            }
            _ = try await app.session.write(Data("after the idle close".utf8))
            try await eventually("the app to reconnect and upload") {
                try await server.server.changesets(in: "p").count == 1
            }
        } catch {
            Issue.record("\(error); errors: \(app.errors.values.prefix(3))")
        }
        await app.close()
        await server.stop()
    }

    @Test func stoppingTheServerLosesTheConnectionAndTheAppReconnectsToANewOne() async throws {
        let first = try await NIOSyncServer.start(serving: try await SyncServer.embedded())
        let port = first.port
        let transport = try NIOWebSocketTransport(url: "ws://127.0.0.1:\(port)")
        let app = try await TestApp(transport, server: transport.endpoint)
        do {
            _ = try await app.session.write(Data("one".utf8))
            try await eventually("the first server to store the changeset") {
                try await first.server.changesets(in: "p").count == 1
            }
            await first.stop()
            try await eventually("the app to report the lost connection") {
                app.errors.values.contains { if case .connectionFailed = $0.error { true } else { false } }
            }
            let second = try await NIOSyncServer.start(serving: try await SyncServer.embedded(), port: port)
            _ = try await app.session.write(Data("two".utf8))
            // A new, empty server: the app uploads both of its changesets again.
            try await eventually("the second server to store both changesets") {
                try await second.server.changesets(in: "p").count == 2
            }
            await second.stop()
        } catch {
            Issue.record("\(error); errors: \(app.errors.values)")
        }
        await app.close()
    }
}

/// `SyncNIOURL`: what `NIOWebSocketTransport(url:)` accepts.
struct SyncNIOURLTests {
    @Test func schemesPortsAndPaths() throws {
        let secure = try SyncNIOURL("WSS://sync.example.com/sync")
        #expect(secure.usesTLS && secure.host == "sync.example.com" && secure.port == 443 && secure.path == "/sync")
        let plain = try SyncNIOURL("ws://sync.example.com")
        #expect(!plain.usesTLS && plain.port == 80 && plain.path == "/")
        let v6 = try SyncNIOURL("wss://[::1]:8443/a/b?c=d")
        #expect(v6.host == "::1" && v6.port == 8443 && v6.path == "/a/b?c=d")
        #expect(v6.description == "wss://[::1]:8443/a/b?c=d")
        #expect(try SyncNIOURL("ws://h:9?x").path == "/?x")
        #expect(v6.endpoint == .webSocket(host: "::1", port: 8443))
    }

    @Test func refusals() {
        #expect(throws: SyncEndpointURLError.unsupportedScheme("https")) { try SyncNIOURL("https://h/") }
        #expect(throws: SyncEndpointURLError.missingScheme("h:9")) { try SyncNIOURL("h:9") }
        #expect(throws: SyncEndpointURLError.unexpectedFragment("#f")) { try SyncNIOURL("wss://h/p#f") }
        #expect(throws: SyncEndpointURLError.unexpectedPath("/a b")) { try SyncNIOURL("wss://h/a b") }
        #expect(throws: SyncEndpointURLError.unexpectedUserInfo) { try SyncNIOURL("wss://u@h/") }
        #expect(throws: SyncEndpointURLError.invalidPort("0")) { try SyncNIOURL("wss://h:0/") }
    }
}
