import Foundation
import TestSupport

extension ChildProcess {
    /// Starts the built `sync-server-pg` (the test target depends on it) with `generousHelloTimeout` (so a
    /// loaded sanitizer run cannot hit production's 10 s `hello` deadline) and then `arguments`; with
    /// `signalOnURL`, that signal is sent the moment it prints its URL. Its waits default to these tests'
    /// 60 s, scaled for the build.
    convenience init(syncServerPG arguments: [String], signalOnURL: Int32? = nil) throws {
        try self.init(
            server: Self.built("sync-server-pg"), Self.generousHelloTimeout + arguments, signalOnURL: signalOnURL,
            defaultDeadline: Duration.seconds(60).scaledForBuild)
    }

    /// A `sync-server-pg` front end on `database` listening on `port` (0: any).
    convenience init(port: Int = 0, database: String, extra: [String] = [], signalOnURL: Int32? = nil) throws {
        try self.init(syncServerPG: ["--port", "\(port)", "--database", database] + extra, signalOnURL: signalOnURL)
    }
}

/// `TestSupport`'s `eventually` with these tests' default deadline, 60 s (scaled for the build as every
/// deadline there is: 6 minutes under ThreadSanitizer), which stays inside the suites' time limits
/// (10 minutes). A call that names no limit resolves here (an overload that needs no default argument
/// wins over TestSupport's `eventually(_:seconds:_:)` and its 20 s); `eventually(_:limit:_:)` is
/// TestSupport's.
func eventually(_ what: String, _ condition: () async throws -> Bool) async throws {
    try await TestSupport.eventually(what, limit: .seconds(60), condition)
}
