import SyncServer
import SyncWire
import TestSupport
import Testing

/// A binding the server already ended and reported must not be reported again later: the client binds the
/// same session number again, and would take the late report for its new binding's.
@Suite(.timeLimit(.minutes(5))) struct StaleSessionErrorTests {
    /// What `PostgresSync`'s `databaseRestartedUnderLoad` hung on (once in 5 runs here): PostgreSQL stopped
    /// while a session's pump read from it and its upload waited in an append. The read failed first: the
    /// pump ended the binding and sent `internalError`; the client bound again after its backoff. The
    /// append failed 10 s later (its timeout), and the upload's failure sent a second `internalError` for
    /// the binding already ended, which reached the client after its new bind: it unbound a binding the
    /// server kept, bound again, got that binding's next download ("version 287 where 69 was due") and
    /// became invalid, its writes never acknowledged.
    @Test func anUploadFailingForABindingItsPumpEndedReportsNothingToTheNextBinding() async throws {
        let others = (1...3).map { version in
            StoredChangeset(
                serverVersion: version, clientFileID: 2, clientVersion: version, data: bytes(UInt8(version)),
                owner: "anonymous")
        }
        let store = ControllableStore(logs: ["p": others])
        let server = try await SyncServer.embedded(configuration: .init(store: store))
        let client = try await TestClient.welcomed(to: server)
        await store.setHolds(reads: true, appends: true)
        // Binding 1: its pump reads versions 1…3 from the store (they are not cached), and waits there.
        client.send(.bind(Bind(sessionID: 1, partition: "p", clientFileID: 1, downloadedVersion: 0)))
        try await waitUntil("binding 1's pump waits for its read") { await store.heldReadCount == 1 }
        // Binding 1's upload waits in the store's append; the connection's next messages wait behind it.
        client.upload(1, from: 1, [bytes(10)])
        try await waitUntil("binding 1's upload waits for its append") { await store.heldAppendCount == 1 }
        await store.setHolds(reads: false, appends: false)
        // The read fails: the pump ends binding 1 and reports it.
        await store.releaseHeldReads(failing: true)
        let ended = try await client.nextError()
        #expect(ended.code == .internalError && ended.sessionID == 1, "\(ended)")
        // As the engine does after its backoff: binding 2, with the upload again.
        client.send(.bind(Bind(sessionID: 1, partition: "p", clientFileID: 1, downloadedVersion: 0)))
        client.upload(1, from: 1, [bytes(10)])
        // Binding 1's append fails now (a timeout, after the database went away).
        await store.releaseHeldAppends(failing: true)
        // Binding 2 is served: its backlog and the acknowledgement of its upload, with no error before.
        let next = try await client.next()
        guard case .download(let first) = next else {
            Issue.record("binding 2 got \(next) before its first download: a report of binding 1's end, again")
            return
        }
        var entries = first.entries
        while entries.count < 4 { entries += try await client.nextDownload().entries }
        #expect(
            entries == [
                .changeset(serverVersion: 1, data: bytes(1)), .changeset(serverVersion: 2, data: bytes(2)),
                .changeset(serverVersion: 3, data: bytes(3)), .acknowledged(serverVersion: 4, clientVersion: 1),
            ])
        try await client.expectNothingPending()
    }
}
