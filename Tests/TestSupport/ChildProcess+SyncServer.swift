import Foundation

extension ChildProcess {
    /// The built `sync-server`.
    package static var syncServer: URL { built("sync-server") }

    /// `--hello-timeout` with a generous deadline for the server programs these tests start: production's
    /// 10 s is shorter than a client's `hello` can take under a sanitizer on a loaded 2-core machine (see
    /// `SyncServer.listeningForTests`), so every test server gets 60 s scaled like every test deadline
    /// (`BuildFlavor.deadlineScale`: 360 s under ThreadSanitizer). It goes first: a test of the deadline
    /// passes its own `--hello-timeout` after it, and the last one given wins.
    public static var generousHelloTimeout: [String] {
        ["--hello-timeout", "\(Int(60 * BuildFlavor.deadlineScale))s"]
    }

    /// Starts the built `sync-server` with `generousHelloTimeout` and then `arguments`; with `signalOnURL`,
    /// that signal is sent the moment its URL line arrives.
    package convenience init(syncServer arguments: [String], signalOnURL: Int32? = nil) throws {
        try self.init(server: Self.syncServer, Self.generousHelloTimeout + arguments, signalOnURL: signalOnURL)
    }
}
