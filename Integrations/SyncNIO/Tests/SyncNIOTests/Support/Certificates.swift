import Dispatch
import Foundation

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
        let status = try await runToCompletion(
            URL(fileURLWithPath: "/bin/bash"), [script.path, directory.path], deadline: .seconds(60))
        guard status == 0 else { throw CertificatesFailed(status: status) }
        return TestCertificates(directory: directory)
    }

    struct CertificatesFailed: Error, CustomStringConvertible {
        let status: Int32
        var description: String { "scripts/make-test-certificates.sh exited with \(status) (is openssl installed?)" }
    }

    /// `Integrations/SyncNIO`, from this file's path.
    static let packageDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
}

/// Runs `executable` to its end (output discarded) and returns its exit status; throws `TimedOut` (and
/// kills it) past `deadline`. The wait is a continuation resumed by the exit or a dispatch timer: it
/// never blocks a thread of the cooperative pool.
func runToCompletion(_ executable: URL, _ arguments: [String], deadline: Duration) async throws -> Int32 {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    let once = OnceBox()
    let status: Int32? = await withCheckedContinuation { (continuation: CheckedContinuation<Int32?, Never>) in
        once.set(continuation)
        process.terminationHandler = { ended in once.resume(ended.terminationStatus) }
        do { try process.run() } catch {
            once.resume(-1)
            return
        }
        let seconds = Double(deadline.scaledForBuild.components.seconds)
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { once.resume(nil) }
    }
    guard let status else {
        process.terminate()
        throw TimedOut(what: "\(executable.lastPathComponent) \(arguments.joined(separator: " "))", limit: deadline)
    }
    return status
}

/// A continuation resumed once, by whichever of several callers comes first.
private final class OnceBox: @unchecked Sendable {
    // @unchecked Sendable: `continuation` is used under `lock`.
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Int32?, Never>?

    func set(_ continuation: CheckedContinuation<Int32?, Never>) { lock.withLock { self.continuation = continuation } }

    func resume(_ value: Int32?) {
        let taken = lock.withLock { () -> CheckedContinuation<Int32?, Never>? in
            defer { continuation = nil }
            return continuation
        }
        taken?.resume(returning: value)
    }
}
