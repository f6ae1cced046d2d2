import Foundation
import TestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The certificates of the tests, made once per test process by `scripts/make-test-certificates.sh`
/// (openssl) in a temporary directory: a self-signed CA and, signed by it, a valid certificate for
/// localhost, an expired one, and one for another host name.
struct TestCertificates: Sendable {
    let directory: URL

    var caFile: String { file("ca.pem") }
    /// A certificate for localhost, 127.0.0.1 and ::1, valid now.
    var server: (certificate: String, key: String) { (file("server.pem"), file("server.key")) }
    /// The same names, valid only in January 2020.
    var expired: (certificate: String, key: String) { (file("expired.pem"), file("expired.key")) }
    /// Valid now, for other.example only.
    var otherHost: (certificate: String, key: String) { (file("otherhost.pem"), file("otherhost.key")) }

    private func file(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Made on first use; later calls share the result.
    static func shared() async throws -> TestCertificates { try await made.value }

    private static let made = Task<TestCertificates, any Error> {
        // One directory per test process, named by its pid; those of processes that ended are removed.
        let temporary = FileManager.default.temporaryDirectory
        let prefix = "SyncNIOTests-certs-"
        for name in (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? []
        where name.hasPrefix(prefix) {
            if let pid = Int32(name.dropFirst(prefix.count)), kill(pid, 0) != 0 {
                try? FileManager.default.removeItem(at: temporary.appendingPathComponent(name))
            }
        }
        let directory = temporary.appendingPathComponent("\(prefix)\(getpid())")
        let script = packageDirectory.appendingPathComponent("scripts/make-test-certificates.sh")
        let make = try ChildProcess(URL(fileURLWithPath: "/bin/bash"), [script.path, directory.path])
        let status = try await make.waitForExit(deadline: Duration.seconds(60).scaledForBuild)
        guard status == 0 else { throw CertificatesFailed(status: status, stderr: make.stderr) }
        return TestCertificates(directory: directory)
    }

    struct CertificatesFailed: Error, CustomStringConvertible {
        let status: Int32
        let stderr: String
        var description: String {
            "scripts/make-test-certificates.sh exited with \(status) (is openssl installed?): \(stderr)"
        }
    }

    /// `Integrations/SyncNIO`, from this file's path.
    static let packageDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
}
