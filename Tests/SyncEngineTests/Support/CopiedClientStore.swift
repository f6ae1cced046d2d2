import Foundation
import SyncServer
import TestSupport

@testable import SyncEngine

/// A client store and a copy of it (a second device, or a backup restored): app directories `original`
/// and `copy` against `server`. `start()` has the original write payload 1 (acknowledged, as client
/// version 1 of its client file) through an app it then closes, and copies the original's directory to
/// `copy` after that: both hold the same client file.
struct CopiedClientStore {
    let server: SyncServer
    let original: TemporaryDirectory
    let copy: TemporaryDirectory

    /// - Parameter server: The server to sync with (default: a new embedded one).
    static func start(server: SyncServer? = nil) async throws -> CopiedClientStore {
        let server = if let server { server } else { try await SyncServer.embedded() }
        let copied = CopiedClientStore(server: server, original: TemporaryDirectory(), copy: TemporaryDirectory())
        do {
            let app = makeApp(server: copied.server.endpoint, directory: copied.original.url)
            let session = try await app.login(.anonymous).openSession(partition: "p")
            try await session.write(payload(1))
            try await session.wait(for: .upload)
            try await app.close()
            try FileManager.default.removeItem(at: copied.copy.url)
            try FileManager.default.copyItem(at: copied.original.url, to: copied.copy.url)
        } catch {
            copied.remove()
            throw error
        }
        return copied
    }

    /// Removes both directories.
    func remove() {
        original.remove()
        copy.remove()
    }
}
