import Foundation
import SyncEngine
import SyncNIO
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The `sync-server-nio` executable: `--tls-cert`/`--tls-key`, a client syncing over `wss://`, a clean stop.
@Suite(.timeLimit(.minutes(5)))
struct ServerProcessTests {
    @Test func syncServerNIOServesWSSFromItsCertificateAndStopsCleanly() async throws {
        let certificates = try await TestCertificates.shared()
        let data = TemporaryDirectory()
        let server = try ChildProcess(syncServerNIO: [
            "--port", "0", "--data", data.url.path, "--tls-cert", certificates.server.certificate,
            "--tls-key", certificates.server.key, "--path", "/sync",
        ])
        let port = try await server.port()
        #expect(server.stdout.contains("listening on wss://127.0.0.1:\(port)/sync"))
        let transport = try NIOWebSocketTransport(
            url: "wss://localhost:\(port)/sync", trustRoots: .certificateAuthorities(pemFile: certificates.caFile))
        let writer = try await TestApp(transport, server: transport.endpoint)
        let reader = try await TestApp(transport, server: transport.endpoint)
        do {
            _ = try await writer.session.write(Data("through sync-server-nio".utf8))
            try await eventually("the reader to receive the writer's changeset") {
                reader.hasReceived("through sync-server-nio")
            }
        } catch {
            Issue.record("\(error); errors: \(writer.errors.values) \(reader.errors.values); stderr: \(server.stderr)")
        }
        await writer.close()
        await reader.close()
        #expect(try await server.stop(SIGTERM) == 0)
        #expect(server.stdout.contains("sync-server-nio stopped"))
        // The log is sync-server's file store: the changeset is in the data directory.
        let files = try FileManager.default.subpathsOfDirectory(atPath: data.url.path)
        #expect(!files.isEmpty)
        data.remove()
    }

    @Test func anAnonymousServerRefusesBrowserPagesUnlessAllowedByAllowOrigin() async throws {
        let data = TemporaryDirectory()
        let strict = try ChildProcess(syncServerNIO: ["--port", "0", "--data", data.url.path])
        let strictPort = try await strict.port()
        #expect(
            try await ServerLimitsTests.statusLine(port: strictPort, origin: "https://app.example.com")
                .hasPrefix("HTTP/1.1 403"))
        #expect(try await ServerLimitsTests.statusLine(port: strictPort, origin: nil).hasPrefix("HTTP/1.1 101"))
        #expect(try await strict.stop(SIGTERM) == 0)
        let allowing = try ChildProcess(syncServerNIO: [
            "--port", "0", "--data", data.url.path, "--allow-origin", "https://app.example.com",
        ])
        let port = try await allowing.port()
        #expect(
            try await ServerLimitsTests.statusLine(port: port, origin: "https://app.example.com")
                .hasPrefix("HTTP/1.1 101"))
        #expect(
            try await ServerLimitsTests.statusLine(port: port, origin: "https://evil.example").hasPrefix("HTTP/1.1 403")
        )
        #expect(try await allowing.stop(SIGTERM) == 0)
        data.remove()
    }

    @Test func helloTimeoutClosesASilentClientOfAServerWithAShortOneBeforeOneOfAServerWithAnHour() async throws {
        let (dataShort, dataLong) = (TemporaryDirectory(), TemporaryDirectory())
        defer {
            dataShort.remove()
            dataLong.remove()
        }
        let short = try ChildProcess(syncServerNIO: [
            "--port", "0", "--data", dataShort.url.path, "--hello-timeout", "1s",
        ])
        let long = try ChildProcess(syncServerNIO: [
            "--port", "0", "--data", dataLong.url.path, "--hello-timeout", "1h",
        ])
        let (shortPort, longPort) = (try await short.port(), try await long.port())
        // Upgraded, then silent: the long server's client first, so that its deadline, were it the short one
        // (or the default 10 s), would pass first. The order of events is the claim, not a duration.
        let longSilent = try await Self.upgradedRawClient(port: longPort)
        let shortSilent = try await Self.upgradedRawClient(port: shortPort)
        do {
            try await eventually("the short server to close its silent client with 1008") {
                shortSilent.closeCode == 1008
            }
            #expect(longSilent.closeCode == nil)
            #expect(!longSilent.isClosed)
        } catch {
            let codes = (String(describing: shortSilent.closeCode), String(describing: longSilent.closeCode))
            Issue.record("\(error); close codes: short \(codes.0), long \(codes.1)")
        }
        await shortSilent.close()
        await longSilent.close()
        #expect(try await short.stop(SIGTERM) == 0)
        #expect(try await long.stop(SIGTERM) == 0)
    }

    /// A raw client connected to `port` whose upgrade was answered `101`.
    static func upgradedRawClient(port: Int) async throws -> RawClient {
        let client = try await RawClient.connect(port: port)
        await client.sendUpgrade()
        try await eventually("the upgrade") { client.receivedText.contains("\r\n\r\n") }
        #expect(client.receivedText.hasPrefix("HTTP/1.1 101"))
        return client
    }

    @Test func helpListsTheSharedTimeouts() async throws {
        let server = try ChildProcess(syncServerNIO: ["--help"])
        #expect(try await server.waitForExit() == 0)
        for option in ["--handshake-timeout", "--idle-timeout", "--hello-timeout"] {
            #expect(server.stdout.contains(option), "\(option)")
        }
    }

    @Test func aCertificateWithoutAKeyIsAUsageError() async throws {
        let server = try ChildProcess(syncServerNIO: ["--port", "0", "--data", "/tmp/unused", "--tls-cert", "cert.pem"])
        #expect(try await server.waitForExit() == 64)
        #expect(server.stderr.contains("--tls-cert and --tls-key go together"))
    }

    @Test func anUnreadableCertificateStopsTheStartWithStatus1() async throws {
        let data = TemporaryDirectory()
        let server = try ChildProcess(syncServerNIO: [
            "--port", "0", "--data", data.url.path, "--tls-cert", "/nonexistent/cert.pem", "--tls-key",
            "/nonexistent/key.pem",
        ])
        #expect(try await server.waitForExit() == 1)
        #expect(server.stderr.contains("cannot serve"))
        data.remove()
    }
}
