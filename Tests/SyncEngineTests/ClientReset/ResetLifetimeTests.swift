import Foundation
import SyncServer
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

/// A client reset belongs to its session (issue 21, item 3): once `app.close()` (or `logOut()`) returns,
/// the reset has ended — it never renames its new store over the path afterwards (resurrecting a store
/// deleted meanwhile, or replacing one another session writes to), and nothing reaches the handler.
@Suite("Client reset lifetime", .timeLimit(.minutes(5)))
struct ResetLifetimeTests {
    /// The files of `directory` (recursively) with their bytes.
    private func snapshot(_ directory: URL) -> [String: Data] {
        var files: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: directory.path)
        while let name = enumerator?.nextObject() as? String {
            let path = directory.appendingPathComponent(name).path
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
                files[name] = FileManager.default.contents(atPath: path)
            }
        }
        return files
    }

    @Test(
        "app.close() from the willReset handler: when close returns the reset is over; the store is not replaced afterwards and the handler hears nothing more"
    )
    func closeDuringAReset() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let original = try await SyncServer.embedded()
        do {
            let app = makeApp(server: original.endpoint, directory: directory.url)
            let session = try await app.login(.anonymous).openSession(partition: "p")
            for value: UInt8 in [1, 2] { try await session.write(payload(value)) }
            try await session.wait(for: .upload)
            try await app.close()
        }
        // A server that lost the log: binding asks for a reset (historyLost).
        let fresh = try await SyncServer.embedded()
        let recorder = ResetRecorder()
        let closed = Locked<(returned: Bool, log: [String], files: [String: Data])?>(nil)
        let appBox = Locked<SyncApp?>(nil)
        let closing = Locked<Task<Void, Never>?>(nil)
        let app = makeApp(
            server: fresh.endpoint, directory: directory.url,
            configure: {
                $0.clientResetHandler = { event, session in
                    recorder.handler(event, session)
                    guard case .willReset = event, let app = appBox.withLock({ $0 }) else { return }
                    closing.withLock {
                        $0 = Task {
                            try? await app.close()
                            let files = snapshot(directory.url)
                            closed.withLock { $0 = (true, recorder.log, files) }
                        }
                    }
                }
            })
        appBox.withLock { $0 = app }
        let session = try await app.login(.anonymous).openSession(partition: "p")
        try await eventually("app.close() returned") { closed.withLock { $0 != nil } }
        // Whatever the reset still had to do is done once it is no longer resetting.
        try await eventually("the reset ended") { await !session.engine.isResetting }
        let atClose = try #require(closed.withLock { $0 })
        #expect(recorder.log == atClose.log, "the handler heard of the reset after close returned")
        #expect(snapshot(directory.url) == atClose.files, "the store's files changed after close returned")
        #expect(!snapshot(directory.url).keys.contains { $0.contains(".reset-") })
        _ = closing.withLock { $0 }
    }
}
