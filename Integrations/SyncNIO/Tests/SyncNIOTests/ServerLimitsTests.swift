import Foundation
import NIOCore
import SyncNIO
import SyncServer
import TestSupport
import Testing

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
