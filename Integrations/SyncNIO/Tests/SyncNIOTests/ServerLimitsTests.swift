import Foundation
import NIOCore
import SyncNIO
import SyncServer
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
        let client = try await RawClient.connect(port: server.port)
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
