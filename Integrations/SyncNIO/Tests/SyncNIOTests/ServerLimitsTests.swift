import Foundation
import NIOCore
import SyncServer
import TestSupport
import Testing

@testable import SyncNIO

/// `NIOSyncServer`'s limits before and after the upgrade, as the root `sync-server`'s (docs/Server.md,
/// "Limits"): browser pages (`Origin`), the `hello` deadline and size.
@Suite(.timeLimit(.minutes(5)))
struct ServerLimitsTests {
    @Test func aBrowserPageIsRefusedWith403ByDefaultAndARequestWithoutOriginIsUpgraded() async throws {
        let server = try await NIOSyncServer.start(serving: try await SyncServer.embedded())
        let page = try await RawClient.connect(port: server.port)
        let program = try await RawClient.connect(port: server.port)
        do {
            await page.sendUpgrade(headers: ["Origin: https://evil.example"])
            await program.sendUpgrade()
            try await eventually("an answer to the page's request", limit: .seconds(20)) {
                page.receivedText.contains("\r\n\r\n")
            }
            try await eventually("an answer to the program's request", limit: .seconds(20)) {
                program.receivedText.contains("\r\n\r\n")
            }
            #expect(page.receivedText.hasPrefix("HTTP/1.1 403"), "\(page.receivedText.prefix(80))")
            #expect(program.receivedText.hasPrefix("HTTP/1.1 101"), "\(program.receivedText.prefix(80))")
        } catch {
            Issue.record("\(error)")
        }
        await page.close()
        await program.close()
        await server.stop()
    }
}

extension ServerLimitsTests {
    /// What `server` answers an upgrade request from a page of `origin` (`nil`: no `Origin` header): the
    /// status line.
    static func statusLine(_ server: NIOSyncServer, origin: String?) async throws -> String {
        try await statusLine(port: server.port, origin: origin)
    }

    static func statusLine(port: Int, origin: String?) async throws -> String {
        let client = try await RawClient.connect(port: port)
        defer { Task { await client.close() } }
        await client.sendUpgrade(headers: origin.map { ["Origin: \($0)"] } ?? [])
        try await eventually("an answer to the request from \(origin ?? "no origin")", limit: .seconds(20)) {
            client.receivedText.contains("\r\n\r\n")
        }
        return String(client.receivedText.prefix { $0 != "\r" })
    }

    @Test func anAllowListAdmitsItsPagesIgnoringCaseAndRefusesOthers() async throws {
        let server = try await NIOSyncServer.start(
            serving: try await SyncServer.embedded(), originPolicy: .allowList(["https://App.example.com"]))
        #expect(try await Self.statusLine(server, origin: "https://app.example.COM").hasPrefix("HTTP/1.1 101"))
        #expect(try await Self.statusLine(server, origin: "https://other.example.com").hasPrefix("HTTP/1.1 403"))
        #expect(try await Self.statusLine(server, origin: nil).hasPrefix("HTTP/1.1 101"))
        let open = try await NIOSyncServer.start(serving: try await SyncServer.embedded(), originPolicy: .anyOrigin)
        #expect(try await Self.statusLine(open, origin: "https://evil.example").hasPrefix("HTTP/1.1 101"))
        await server.stop()
        await open.stop()
    }
}

extension ServerLimitsTests {
    /// A raw client upgraded on `server` (no `hello` sent).
    static func upgraded(_ server: NIOSyncServer) async throws -> RawClient {
        let client = try await RawClient.connect(port: server.port)
        await client.sendUpgrade()
        try await eventually("the upgrade", limit: .seconds(20)) { client.receivedText.contains("\r\n\r\n") }
        #expect(client.receivedText.hasPrefix("HTTP/1.1 101"))
        return client
    }

    @Test func aFrameAboveTheHelloLimitBeforeHelloIsClosedWith1009FromItsHeader() async throws {
        let server = try await NIOSyncServer.start(serving: try await SyncServer.embedded())
        let client = try await Self.upgraded(server)
        do {
            // The header announces 64 KiB (the limit before `hello` is 2 KiB); only 10 bytes follow.
            await client.send(clientFrame(opcode: 2, payload: Array(repeating: 7, count: 10), claimedLength: 65_536))
            try await eventually("the server to close with 1009", limit: .seconds(20)) { client.closeCode == 1009 }
        } catch {
            Issue.record("\(error); close code \(String(describing: client.closeCode)), \(client.received.count) bytes")
        }
        await client.close()
        await server.stop()
    }

    @Test func aConnectionThatNeverSaysHelloIsClosedWith1008AfterTheHelloTimeoutHoweverOftenItPings() async throws {
        let server = try await NIOSyncServer.start(
            serving: try await SyncServer.embedded(), helloTimeout: .milliseconds(300))
        let client = try await Self.upgraded(server)
        do {
            // A ping every poll (5 ms): the pings are answered, and do not extend the deadline.
            try await eventually("the server to close with 1008", limit: .seconds(20)) {
                await client.send(clientFrame(opcode: 9, payload: [1]))
                return client.closeCode == 1008
            }
        } catch {
            Issue.record("\(error); close code \(String(describing: client.closeCode)), \(client.received.count) bytes")
        }
        await client.close()
        await server.stop()
    }
}

extension ServerLimitsTests {
    @Test func messagesSentRightBehindHelloAreServedAfterWelcomeWithoutTheHelloLimit() async throws {
        let server = try await NIOSyncServer.start(serving: try await SyncServer.embedded())
        let client = try await Self.upgraded(server)
        // One write: `hello`, `bind`, and an upload of 3 KiB (above the 2 KiB limit before `hello`).
        let changeset = Array(repeating: UInt8(42), count: 3 * 1024)
        let messages: [ClientMessage] = [
            .hello(Hello(credential: .anonymous)),
            .bind(Bind(sessionID: 1, partition: "p", clientFileID: 7, downloadedVersion: 0)),
            .upload(Upload(sessionID: 1, changesets: [UploadChangeset(clientVersion: 1, data: changeset)])),
        ]
        await client.send(messages.flatMap { clientFrame(opcode: 2, payload: $0.encoded()) })
        do {
            try await eventually("the server to store the upload sent behind hello", limit: .seconds(20)) {
                try await server.server.changesets(in: "p").map(\.data) == [changeset]
            }
            #expect(client.closeCode == nil)
        } catch {
            Issue.record("\(error); close code \(String(describing: client.closeCode))")
        }
        await client.close()
        await server.stop()
    }
}

extension ServerLimitsTests {
    @Test(
        "past maximumHandshakingConnections a new socket is closed at once and counted; the ones handshaking are kept")
    func aSocketPastTheHandshakingLimitIsClosedAtOnce() async throws {
        let server = try await NIOSyncServer.start(
            serving: try await SyncServer.embedded(), handshakeTimeout: .seconds(60), maximumHandshakingConnections: 2)
        // Two sockets that send half a request, then nothing.
        let idle = [try await RawClient.connect(port: server.port), try await RawClient.connect(port: server.port)]
        for client in idle { await client.send(Array("GET / HTTP/1.1\r\n".utf8)) }
        let third: RawClient
        do {
            try await eventually("both idle sockets to be handshaking", limit: .seconds(20)) {
                server.handshakingConnectionCount == 2
            }
            third = try await RawClient.connect(port: server.port)
            try await eventually("the third socket to be closed", limit: .seconds(20)) { third.isClosed }
            // The first is still handshaking: finishing its request upgrades it.
            await idle[0].send(
                Array(
                    ("Host: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                        + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n").utf8))
            try await eventually("the first socket's upgrade", limit: .seconds(20)) {
                idle[0].receivedText.contains("\r\n\r\n")
            }
            #expect(idle[0].receivedText.hasPrefix("HTTP/1.1 101"), "\(idle[0].receivedText.prefix(80))")
            // Upgraded, it no longer counts: a new socket is admitted.
            try await eventually("one socket left handshaking", limit: .seconds(20)) {
                server.handshakingConnectionCount == 1
            }
            #expect(try await Self.statusLine(server, origin: nil).hasPrefix("HTTP/1.1 101"))
        } catch {
            Issue.record("\(error)")
            for client in idle { await client.close() }
            await server.stop()
            return
        }
        let samples = HTTPAnswer(status: 200, body: server.server.prometheusMetrics).samples
        #expect(samples["sync_connections_refused_total{reason=\"handshaking_limit\"}"] == 1, "\(samples)")
        await third.close()
        for client in idle { await client.close() }
        await server.stop()
    }

    @Test func aSocketThatNeverFinishesItsHandshakeIsClosedAfterTheTimeoutAndCountedAsABadHandshake() async throws {
        let server = try await NIOSyncServer.start(
            serving: try await SyncServer.embedded(), handshakeTimeout: .milliseconds(200))
        let client = try await RawClient.connect(port: server.port)
        await client.send(Array("GET / HTTP/1.1\r\n".utf8))
        do {
            try await eventually("the silent socket to be closed", limit: .seconds(20)) { client.isClosed }
            try await eventually("nothing left handshaking", limit: .seconds(20)) {
                server.handshakingConnectionCount == 0
            }
        } catch {
            Issue.record("\(error)")
        }
        let samples = HTTPAnswer(status: 200, body: server.server.prometheusMetrics).samples
        #expect(samples["sync_connections_refused_total{reason=\"bad_handshake\"}"] == 1, "\(samples)")
        await client.close()
        await server.stop()
    }

    @Test func theBytesOfEverySocketAreCountedInTheMetricsExactly() async throws {
        let server = try await NIOSyncServer.start(serving: try await SyncServer.embedded())
        let client = try await Self.upgraded(server)
        let hello = clientFrame(opcode: 2, payload: ClientMessage.hello(Hello(credential: .anonymous)).encoded())
        await client.send(hello)
        do {
            // `welcome` follows the 101 response (it may have arrived already: the response's head is counted
            // in bytes, not from the text, whose decoding replaces a frame's bytes).
            let head = try #require(client.responseHeadCount)
            try await eventually("the welcome after the 101 response", limit: .seconds(20)) {
                client.received.count > head
            }
            let requestBytes = Self.upgradeRequestBytes + hello.count
            try await eventually("the server to count every byte both ways", limit: .seconds(20)) {
                let samples = HTTPAnswer(status: 200, body: server.server.prometheusMetrics).samples
                return samples["sync_received_bytes_total"] == Double(requestBytes)
                    && samples["sync_sent_bytes_total"] == Double(client.received.count)
            }
        } catch {
            let samples = HTTPAnswer(status: 200, body: server.server.prometheusMetrics).samples
            let counted =
                "received \(String(describing: samples["sync_received_bytes_total"])), sent "
                + "\(String(describing: samples["sync_sent_bytes_total"]))"
            Issue.record(
                "\(error): \(counted); the client sent \(Self.upgradeRequestBytes + hello.count) and received \(client.received.count)"
            )
        }
        await client.close()
        await server.stop()
    }

    /// The bytes of `RawClient.sendUpgrade()`'s request.
    static var upgradeRequestBytes: Int {
        [
            "GET / HTTP/1.1", "Host: 127.0.0.1", "Upgrade: websocket", "Connection: Upgrade",
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13",
        ].joined(separator: "\r\n").utf8.count + 4
    }
}
