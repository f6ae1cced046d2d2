import Foundation

extension ChildProcess {
    /// The built `sync-server`.
    package static var syncServer: URL { built("sync-server") }

    /// Starts the built `sync-server` with `arguments`; with `signalOnURL`, that signal is sent the moment
    /// its URL line arrives.
    package convenience init(syncServer arguments: [String], signalOnURL: Int32? = nil) throws {
        try self.init(server: Self.syncServer, arguments, signalOnURL: signalOnURL)
    }
}
