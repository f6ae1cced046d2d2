import SyncStreams

/// Write receipts: whether a write has reached the server, and waiting until it has (see `WriteReceipt`).
extension SyncSession {
    /// Whether `receipt`'s write is written and not yet acknowledged by the server; up to date as soon as
    /// `write(_:)` returned, and read from the local store after a relaunch.
    ///
    /// A write a client reset recovered is pending under its old receipt until it is uploaded again; one
    /// a reset discarded is not pending. `false` for another session's receipt.
    public func isPending(_ receipt: WriteReceipt) -> Bool {
        engine.receipts.resolve(receipt.clientFileID, receipt.clientVersion) == .pending
    }

    /// The receipt of the write with `clientVersion` in the session's store — e.g. one written before the
    /// app was relaunched, whose client version the app kept; `nil` when the store holds no such write.
    public func receipt(for clientVersion: UInt64) -> WriteReceipt? {
        engine.receipts.clientFileID(holding: clientVersion).map {
            WriteReceipt(clientVersion: clientVersion, clientFileID: $0, session: self)
        }
    }

    /// The receipt of the write with `clientVersion` in the store `clientFileID` — e.g. one written before
    /// the app was relaunched, and before a client reset gave the session's store a new client file id,
    /// whose client file id and version the app kept; `nil` when the session knows no such store (another
    /// session's, or one older than the resets its store remembers) or the current store holds no such
    /// write. The receipt answers as the one `write(_:)` returned: pending, uploaded, or discarded.
    public func receipt(for clientVersion: UInt64, clientFileID: UInt64) -> WriteReceipt? {
        guard clientVersion >= 1, engine.receipts.resolve(clientFileID, clientVersion) != .unknown else { return nil }
        return WriteReceipt(clientVersion: clientVersion, clientFileID: clientFileID, session: self)
    }

    /// The writes not yet acknowledged by the server (the newest client versions of the session's store),
    /// as a state: the current set at once on subscribe (read from the store after a relaunch), then each
    /// change — a write, an acknowledgement, a client reset — on the session's callback executor. Finishes
    /// when the app closes or the user logs out. `value` is up to date as soon as `write(_:)` returned.
    public var pendingWrites: StateStream<PendingWrites> { engine.receipts.stream }

    /// `receipt.uploaded`: returns at once for an acknowledged write, throws at once for a discarded one,
    /// and otherwise waits — as `wait(for:)` does, never on a stopped session.
    func waitUntilUploaded(_ receipt: WriteReceipt) async throws(SyncError) {
        let receipts = engine.receipts
        let (clientFileID, clientVersion) = (receipt.clientFileID, receipt.clientVersion)
        switch receipts.resolve(clientFileID, clientVersion) {
        case .acknowledged: return
        case .discarded(let error): throw error
        case .unknown: throw ReceiptLedger.unknownStore
        case .pending: break
        }
        try await waitWhileSyncing { () throws(SyncError) in
            if let failure = await receipts.wait(clientFileID, clientVersion) { throw failure }
        }
    }
}
