import Foundation
import SyncEngine
import SyncNIO
import TestSupport
import Testing

/// The documented deployment (docs/Server.md, "TLS"): the root package's `sync-server` behind a real
/// TLS-terminating nginx, reached with `NIOWebSocketTransport` over `wss://`. `scripts/with-nginx.sh`
/// starts both and sets `SYNCNIO_NGINX_URL` and `SYNCNIO_NGINX_CA`; without them the suite is skipped,
/// except in CI (`CI` set), where their absence fails it.
@Suite(
    .enabled(if: NginxDeployment.isEnabled, NginxDeployment.skipReason), .timeLimit(.minutes(5)))
struct NginxTests {
    @Test func appsSyncThroughNginxAndSyncServerOverWSS() async throws {
        let deployment = try NginxDeployment.current()
        let transport = try NIOWebSocketTransport(
            url: deployment.url, trustRoots: .certificateAuthorities(pemFile: deployment.caFile))
        let writer = try await TestApp(transport, server: transport.endpoint, partition: "nginx")
        let reader = try await TestApp(transport, server: transport.endpoint, partition: "nginx")
        do {
            _ = try await writer.session.write(Data("through nginx".utf8))
            try await eventually("the reader to receive the writer's changeset through nginx") {
                reader.hasReceived("through nginx")
            }
            #expect(writer.errors.values.isEmpty && reader.errors.values.isEmpty)
        } catch {
            Issue.record("\(error); errors: \(writer.errors.values) \(reader.errors.values)")
        }
        await writer.close()
        await reader.close()
    }

    @Test func aPathNginxDoesNotProxyIsRefusedAndRetried() async throws {
        let deployment = try NginxDeployment.current()
        var url = try SyncNIOURL(deployment.url)
        url.path = "/elsewhere"
        let transport = NIOWebSocketTransport(url: url, trustRoots: .certificateAuthorities(pemFile: deployment.caFile))
        let app = try await TestApp(transport, server: transport.endpoint, partition: "nginx-elsewhere")
        do {
            try await eventually("nginx's 404 to be reported") {
                app.errors.values.contains {
                    if case .connectionFailed(let reason) = $0.error { reason.contains("404") } else { false }
                }
            }
            #expect(app.session.state.value == .active)
        } catch {
            Issue.record("\(error); errors: \(app.errors.values)")
        }
        await app.close()
    }

    @Test func nginxsCertificateIsRejectedWithoutTheTestCA() async throws {
        let deployment = try NginxDeployment.current()
        let transport = try NIOWebSocketTransport(url: deployment.url, trustRoots: .system)
        let app = try await TestApp(transport, server: transport.endpoint, partition: "nginx-untrusted")
        do {
            try await eventually("the session to fail fatally", limit: .seconds(20)) {
                app.session.state.value == .invalid
            }
            #expect(app.certificateErrors.count == 1, "\(app.errors.values)")
        } catch {
            Issue.record("\(error); errors: \(app.errors.values)")
        }
        await app.close()
    }
}

/// What `scripts/with-nginx.sh` started.
enum NginxDeployment {
    static let environment = ProcessInfo.processInfo.environment
    static let isEnabled = environment["SYNCNIO_NGINX_URL"] != nil || environment["CI"] != nil
    static let skipReason: Comment = "no nginx deployment: run scripts/with-nginx.sh swift test"

    struct Unavailable: Error, CustomStringConvertible {
        var description: String {
            "SYNCNIO_NGINX_URL and SYNCNIO_NGINX_CA are not set (scripts/with-nginx.sh sets them)"
        }
    }

    static func current() throws -> (url: String, caFile: String) {
        guard let url = environment["SYNCNIO_NGINX_URL"], let ca = environment["SYNCNIO_NGINX_CA"] else {
            throw Unavailable()
        }
        return (url, ca)
    }
}
