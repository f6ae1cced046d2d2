import Foundation
import SyncEngine
import SyncNIO
import SyncServer
import TestSupport
import Testing

/// `wss://` between `NIOWebSocketTransport` and `NIOSyncServer`, with certificates made at test time.
@Suite(.timeLimit(.minutes(5)))
struct TLSTests {
    /// A TLS front end on 127.0.0.1 (any port) for a new embedded server, with `identity`.
    static func startServer(_ identity: (certificate: String, key: String)) async throws -> NIOSyncServer {
        let server = try await SyncServer.embedded()
        return try await NIOSyncServer.start(
            serving: server,
            tls: .init(certificateChainFile: identity.certificate, privateKeyFile: identity.key))
    }

    @Test func aWriteReachesAnotherAppOverWSS() async throws {
        let certificates = try await TestCertificates.shared()
        let server = try await Self.startServer(certificates.server)
        let transport = try NIOWebSocketTransport(
            url: "wss://localhost:\(server.port)/sync",
            trustRoots: .certificateAuthorities(pemFile: certificates.caFile))
        let writer = try await TestApp(transport, server: transport.endpoint)
        let reader = try await TestApp(transport, server: transport.endpoint)
        do {
            _ = try await writer.session.write(Data("over TLS".utf8))
            try await eventually("the reader to receive the writer's changeset over wss://") {
                reader.hasReceived("over TLS")
            }
            #expect(writer.errors.values.isEmpty && reader.errors.values.isEmpty)
        } catch {
            Issue.record("\(error); writer errors: \(writer.errors.values), reader errors: \(reader.errors.values)")
        }
        await writer.close()
        await reader.close()
        await server.stop()
    }

    /// Connects an app to a server with `identity`, trusting `trustRoots`, and checks that the session
    /// fails fatally with `certificateRejected`, long before the connect timeout, on its first attempt.
    private func expectCertificateRejected(
        server identity: (certificate: String, key: String), trustRoots: TrustRoots,
        _ sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let server = try await Self.startServer(identity)
        let transport = CountingTransport(
            try NIOWebSocketTransport(url: "wss://localhost:\(server.port)/", trustRoots: trustRoots))
        let app = try await TestApp(transport, server: .webSocket(host: "localhost", port: server.port))
        do {
            try await eventually("the session to fail fatally", limit: .seconds(20)) {
                app.session.state.value == .invalid
            }
            // No sleep-and-count: a session is `.invalid` only after a fatal error, and that state is
            // final (no reconnect is scheduled for it: the root package's virtual-time test
            // `ConnectionManagementTests.rejectedCertificateIsFatal` proves that part). So the claim here
            // is that the first attempt's failure was already fatal: one attempt when the session became
            // `.invalid` (a non-fatal error is retried 20 ms later and never makes it `.invalid`), the
            // status closed for good by `certificateRejected`, and no `connectionFailed` reported.
            #expect(transport.connections == 1, "connection attempts", sourceLocation: sourceLocation)
            try await eventually("the certificate error to be reported", limit: .seconds(20)) {
                !app.certificateErrors.isEmpty
            }
            try await eventually("the status to show the session closed by certificateRejected") {
                let status = app.session.status.value
                guard case .certificateRejected = status.lastError else { return false }
                return status.offlineReason == .closed
            }
            #expect(app.certificateErrors.count == 1, "\(app.errors.values.prefix(3))", sourceLocation: sourceLocation)
            #expect(
                !app.errors.values.contains { if case .connectionFailed = $0.error { true } else { false } },
                "\(app.errors.values.prefix(3))", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(error); errors: \(app.errors.values.prefix(3))", sourceLocation: sourceLocation)
        }
        await app.close()
        await server.stop()
    }

    @Test func anExpiredCertificateIsAFatalCertificateErrorWithoutRetries() async throws {
        let certificates = try await TestCertificates.shared()
        try await expectCertificateRejected(
            server: certificates.expired, trustRoots: .certificateAuthorities(pemFile: certificates.caFile))
    }

    @Test func aCertificateForAnotherHostNameIsAFatalCertificateErrorWithoutRetries() async throws {
        let certificates = try await TestCertificates.shared()
        try await expectCertificateRejected(
            server: certificates.otherHost, trustRoots: .certificateAuthorities(pemFile: certificates.caFile))
    }

    @Test func aCertificateFromAnUntrustedAuthorityIsAFatalCertificateError() async throws {
        let certificates = try await TestCertificates.shared()
        // The system's trust store does not hold the test CA.
        try await expectCertificateRejected(server: certificates.server, trustRoots: .system)
    }

    @Test func theSystemRootsPlusACustomCATrustTheCustomCA() async throws {
        let certificates = try await TestCertificates.shared()
        let server = try await Self.startServer(certificates.server)
        let transport = try NIOWebSocketTransport(
            url: "wss://localhost:\(server.port)",
            trustRoots: .certificateAuthorities(pemFile: certificates.caFile, includingSystemRoots: true))
        let writer = try await TestApp(transport, server: transport.endpoint)
        do {
            _ = try await writer.session.write(Data("both".utf8))
            try await eventually("the server to store the changeset uploaded over wss://") {
                try await server.server.changesets(in: "p").map(\.data) == [Array("both".utf8)]
            }
        } catch {
            Issue.record("\(error); errors: \(writer.errors.values)")
        }
        await writer.close()
        await server.stop()
    }

    @Test func anIPAddressURLIsCheckedAgainstTheCertificatesAddresses() async throws {
        let certificates = try await TestCertificates.shared()
        let trust = TrustRoots.certificateAuthorities(pemFile: certificates.caFile)
        // server.pem names IP 127.0.0.1: accepted.
        let server = try await Self.startServer(certificates.server)
        let transport = try NIOWebSocketTransport(url: "wss://127.0.0.1:\(server.port)/", trustRoots: trust)
        let writer = try await TestApp(transport, server: transport.endpoint)
        do {
            _ = try await writer.session.write(Data("by address".utf8))
            try await eventually("the server to store the changeset uploaded to wss://127.0.0.1") {
                try await server.server.changesets(in: "p").map(\.data) == [Array("by address".utf8)]
            }
        } catch {
            Issue.record("\(error); errors: \(writer.errors.values.prefix(3))")
        }
        await writer.close()
        await server.stop()
        // otherhost.pem names only other.example: refused for 127.0.0.1.
        let other = try await Self.startServer(certificates.otherHost)
        let refused = try NIOWebSocketTransport(url: "wss://127.0.0.1:\(other.port)/", trustRoots: trust)
        let app = try await TestApp(refused, server: refused.endpoint)
        do {
            try await eventually("the session to fail fatally", limit: .seconds(20)) {
                app.session.state.value == .invalid
            }
            #expect(app.certificateErrors.count == 1, "\(app.errors.values.prefix(3))")
        } catch {
            Issue.record("\(error); errors: \(app.errors.values.prefix(3))")
        }
        await app.close()
        await other.stop()
    }

    @Test func aMissingCAFileIsAFatalCertificateError() async throws {
        let certificates = try await TestCertificates.shared()
        try await expectCertificateRejected(
            server: certificates.server,
            trustRoots: .certificateAuthorities(pemFile: certificates.directory.appendingPathComponent("none.pem").path)
        )
    }
}
