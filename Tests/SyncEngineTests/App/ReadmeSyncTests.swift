import Foundation
import SyncEngine
import SyncServer
import TestSupport
import Testing

/// The README's syncing example, as written there except that `DispatchQueue.main` is a `TestExecutor`
/// (so throttling runs in virtual time) and the callback executor is immediate; what it prints is checked.
@Suite("README: syncing example", .timeLimit(.minutes(5)))
struct ReadmeSyncTests {
    @Test("the README's syncing example behaves as documented")
    func syncingExample() async throws {
        let printed = Locked<[String]>([])
        let print: @Sendable (String) -> Void = { line in printed.withLock { $0.append(line) } }
        let main = TestExecutor()
        let temporary = TemporaryDirectory()
        defer { temporary.remove() }
        let directory = temporary.url

        let server = try await SyncServer.embedded()
        let app = SyncApp(
            configuration: .init(server: server.endpoint, directory: directory, callbackExecutor: ImmediateExecutor()))
        let user = try await app.login(.anonymous)
        let session = try await user.openSession(partition: "tasks")

        var tokens = Set<SubscriptionToken>()

        session.connectionState
            .subscribe { state in print("connection: \(state)") }
            .store(in: &tokens)

        session.progress(for: .upload, mode: .reportIndefinitely)
            .subscribe { progress in print("upload \(Int(progress.progressEstimate * 100)) %") }
            .store(in: &tokens)

        try await eventually("connected") { session.connectionState.value == .connected }
        try await session.wait(for: .download)
        let downloadToken = session.addProgressNotification(for: .download, mode: .forCurrentlyOutstandingWork) {
            progress in print("initial download \(progress.transferredBytes) / \(progress.transferrableBytes) bytes")
        }
        #expect(downloadToken == nil)  // nothing outstanding on an empty partition
        #expect(printed.withLock { $0 }.contains("initial download 0 / 0 bytes"))

        session.progress(for: .upload, mode: .reportIndefinitely)
            .combineLatest(session.progress(for: .download, mode: .reportIndefinitely))
            .map { upload, download in upload.isTransferComplete && download.isTransferComplete }
            .removeDuplicates()
            .throttle(for: .milliseconds(100), on: main, latest: true)
            .observe(on: main)
            .subscribe { synced in print(synced ? "✓ synced" : "⟳ syncing…") }
            .store(in: &tokens)

        let receipt = try await session.write(Data("buy milk".utf8))
        try await receipt.uploaded
        #expect(!session.isPending(receipt))
        try await session.wait(for: .upload)
        main.advance(by: .milliseconds(100))
        main.advance(by: .milliseconds(100))
        session.changesets.subscribe { print("v\($0.serverVersion): \($0.data.count) bytes") }.store(in: &tokens)

        let lines = printed.withLock { $0 }
        #expect(lines.contains("connection: connected"))
        #expect(lines.filter { $0.hasPrefix("upload") } == ["upload 100 %", "upload 0 %", "upload 100 %"])
        #expect(lines.filter { $0.contains("synced") || $0.contains("syncing") }.last == "✓ synced")
        #expect(lines.last == "v1: 8 bytes")
    }
}
