import Foundation
import TestSupport

extension ChildProcess {
    /// Starts the built `sync-server-nio` (the test target depends on it) with `generousHelloTimeout` (so a
    /// loaded sanitizer run cannot hit production's 10 s `hello` deadline) and then `arguments`. Its waits
    /// default to these tests' 60 s, scaled for the build.
    convenience init(syncServerNIO arguments: [String]) throws {
        try self.init(
            server: Self.built("sync-server-nio"), Self.generousHelloTimeout + arguments,
            defaultDeadline: Duration.seconds(60).scaledForBuild)
    }
}

/// `TestSupport`'s `eventually` with these tests' default deadline, 60 s (scaled for the build as every
/// deadline there is: 6 minutes under ThreadSanitizer). A call that names no limit resolves here (an overload that needs no default argument
/// wins over TestSupport's `eventually(_:seconds:_:)` and its 20 s); `eventually(_:limit:_:)` is
/// TestSupport's.
func eventually(_ what: String, _ condition: () async throws -> Bool) async throws {
    try await TestSupport.eventually(what, limit: .seconds(60), condition)
}
