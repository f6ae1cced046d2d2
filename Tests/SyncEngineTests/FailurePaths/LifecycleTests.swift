import Foundation
import SyncServer
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

/// What is released when an app closes or a user logs out, and what later calls do.
@Suite("Lifecycle", .timeLimit(.minutes(5)))
struct LifecycleTests {
    /// The open file descriptors of this process that refer to files under `directory`.
    private func descriptors(under directory: URL) -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return entries.compactMap { entry in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(entry)")
            else { return nil }
            return target.hasPrefix(directory.path) ? target : nil
        }
    }

    @Test(
        "close(): sessions stop, connections close, files are closed, nothing is retained; unuploaded changes stay for next time"
    )
    func closeReleasesEverything() async throws {
        let server = try await SyncServer.embedded()
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let weakApp = WeakReference<SyncApp>()
        let weakUser = WeakReference<SyncUser>()
        let weakSession = WeakReference<SyncSession>()
        let weakEngine = WeakReference<SessionEngine>()
        do {
            let transport = FaultInjectingTransport()
            let app = makeApp(server: server.endpoint, directory: directory.url, transport: transport)
            let user = try await app.login(.anonymous)
            let session = try await user.openSession(partition: "p")
            let other = try await user.openSession(partition: "q")
            try await session.wait(for: .download)
            try await other.wait(for: .download)
            session.suspend()
            try await session.write(Data("not uploaded yet".utf8))
            let errorsFinished = Collected(app.errors)
            #expect(!descriptors(under: directory.url).isEmpty)
            #expect(server.connectionCount == 1)

            try await app.close()
            #expect(session.state.value == .inactive)
            #expect(other.state.value == .inactive)
            #expect(other.connectionState.value == .disconnected)
            try await eventually("the server sees the connection close") { server.connectionCount == 0 }
            #expect(descriptors(under: directory.url).isEmpty)
            try await eventually("errors finished") { errorsFinished.isFinished }

            // Later calls throw .appClosed or do nothing.
            await #expect(throws: SyncError.appClosed) { try await session.write(Data("x".utf8)) }
            await #expect(throws: SyncError.appClosed) { try await other.wait(for: .upload) }
            await #expect(throws: SyncError.appClosed) { try await other.wait(for: .download) }
            await #expect(throws: SyncError.appClosed) { try await app.login(.anonymous) }
            await #expect(throws: SyncError.appClosed) { try await user.openSession(partition: "r") }
            session.resume()
            session.reconnect()
            #expect(session.state.value == .inactive)
            #expect(session.addProgressNotification(for: .upload, mode: .reportIndefinitely) { _ in } == nil)
            try await app.close()  // again: nothing more
            #expect(transport.attempts == 1)

            weakApp.object = app
            weakUser.object = user
            weakSession.object = session
            weakEngine.object = session.engine
        }
        try await eventually("everything released") {
            weakApp.object == nil && weakUser.object == nil && weakSession.object == nil && weakEngine.object == nil
        }

        // The change written before closing is on disk and goes up with the next app.
        let next = makeApp(server: server.endpoint, directory: directory.url)
        let reopened = try await next.login(.anonymous).openSession(partition: "p")
        try await reopened.wait(for: .upload)
        #expect(try await server.changesets(in: "p").map(\.data) == [Array("not uploaded yet".utf8)])
        try await next.close()
    }

    @Test("logOut(): the user's sessions stop and the app forgets it, so a later login starts afresh")
    func logOutStartsAfresh() async throws {
        var configuration = SyncServer.Configuration()
        configuration.authentication = .apiKeys(["good": ["p"]])
        let server = try await SyncServer.embedded(configuration: configuration)
        let fixture = try await EngineFixture(server: server)
        defer { fixture.directory.remove() }
        let stuck = try await fixture.app.login(.apiKey("bad"))
        let refused = try await stuck.openSession(partition: "p")
        try await eventually("refused") { refused.state.value == .invalid }

        await stuck.logOut()
        #expect(stuck.allSessions.isEmpty)
        await #expect(throws: SyncError.appClosed) { try await stuck.openSession(partition: "p") }
        let again = try await fixture.app.login(.apiKey("bad"))
        #expect(again !== stuck)
        let fresh = try await again.openSession(partition: "p")
        #expect(fresh !== refused)
        #expect(fresh.state.value == .active)

        let good = try await fixture.app.login(.apiKey("good"))
        let session = try await good.openSession(partition: "p")
        try await session.write(Data("works".utf8))
        try await session.wait(for: .upload)
        await good.logOut()
        #expect(session.state.value == .inactive)
        await #expect(throws: SyncError.appClosed) { try await session.write(Data()) }
    }

    @Test("openSession of an inactive session resumes it")
    func openRevivesAnInactiveSession() async throws {
        let fixture = try await EngineFixture()
        defer { fixture.directory.remove() }
        let user = try await fixture.app.login(.anonymous)
        let session = try await user.openSession(partition: "p")
        session.suspend()
        try await session.write(Data("while inactive".utf8))
        let again = try await user.openSession(partition: "p")
        #expect(again === session)
        #expect(session.state.value == .active)
        try await session.wait(for: .upload)
        #expect(try await fixture.serverLog() == [Array("while inactive".utf8)])
    }

    @Test("sessions opened concurrently for one partition are one session")
    func concurrentOpensShareOneSession() async throws {
        let fixture = try await EngineFixture()
        defer { fixture.directory.remove() }
        let user = try await fixture.app.login(.anonymous)
        let sessions = try await withThrowingTaskGroup(of: SyncSession.self) { group in
            for _ in 0..<8 { group.addTask { try await user.openSession(partition: "p") } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(sessions.map(ObjectIdentifier.init)).count == 1)
        #expect(user.allSessions.count == 1)
    }
}

@Suite("Local files", .timeLimit(.minutes(5)))
struct LocalFilesTests {
    @Test("a second app on the same directory gets storeInUse instead of a second writer")
    func oneWriterPerStore() async throws {
        let server = try await SyncServer.embedded()
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let first = makeApp(server: server.endpoint, directory: directory.url)
        let session = try await first.login(.anonymous).openSession(partition: "p")
        try await session.write(Data("first".utf8))
        let second = makeApp(server: server.endpoint, directory: directory.url)
        let path = directory.url.appendingPathComponent("anonymous/p.synclog").path
        await #expect(throws: SyncError.storeInUse(path: path)) {
            try await second.login(.anonymous).openSession(partition: "p")
        }
        try await first.close()
        // Closed and unlocked: the second app may open it now, and finds the first app's write.
        let reopened = try await second.login(.anonymous).openSession(partition: "p")
        try await reopened.wait(for: .upload)
        #expect(try await server.changesets(in: "p").map(\.data) == [Array("first".utf8)])
    }

    @Test("deleteLocalFiles refuses while the store is in use, then deletes it: reopening downloads everything again")
    func deleteLocalFiles() async throws {
        let server = try await SyncServer.embedded()
        let writerDirectory = TemporaryDirectory()
        let directory = TemporaryDirectory()
        defer {
            writerDirectory.remove()
            directory.remove()
        }
        let writer = try await makeApp(server: server.endpoint, directory: writerDirectory.url)
            .login(.anonymous).openSession(partition: "p")
        for index in 0..<3 { try await writer.write(Data([UInt8(index)])) }
        try await writer.wait(for: .upload)

        let app = makeApp(server: server.endpoint, directory: directory.url)
        let user = try await app.login(.anonymous)
        let session = try await user.openSession(partition: "p")
        try await session.wait(for: .download)
        let path = directory.url.appendingPathComponent("anonymous/p.synclog").path
        await #expect(throws: SyncError.storeInUse(path: path)) {
            try await app.deleteLocalFiles(for: user, partition: "p")
        }
        // Another app holding the store's lock is refused too.
        await user.logOut()
        let other = makeApp(server: server.endpoint, directory: directory.url)
        let otherSession = try await other.login(.anonymous).openSession(partition: "p")
        await #expect(throws: SyncError.storeInUse(path: path)) {
            try await app.deleteLocalFiles(for: user, partition: "p")
        }
        let firstFileID = await otherSession.engine.clientFileIDForTests
        try await other.close()

        try await app.deleteLocalFiles(for: user, partition: "p")
        #expect(!FileManager.default.fileExists(atPath: path))
        let leftovers = try FileManager.default.contentsOfDirectory(
            atPath: directory.url.appendingPathComponent("anonymous").path)
        #expect(leftovers.isEmpty)

        let transport = RecordingTransport()
        let fresh = try await makeApp(server: server.endpoint, directory: directory.url, transport: transport)
            .login(.anonymous).openSession(partition: "p")
        try await fresh.wait(for: .download)
        #expect(await fresh.engine.clientFileIDForTests != firstFileID)
        let binds = transport.sent.compactMap { if case .bind(let bind) = $0 { bind } else { nil } }
        #expect(binds.map(\.downloadedVersion) == [0])
        #expect(Collected(fresh.changesets).values.count == 3)
        await #expect(throws: SyncError.invalidArgument("a partition name must not be empty")) {
            try await app.deleteLocalFiles(for: user, partition: "")
        }
    }
}
