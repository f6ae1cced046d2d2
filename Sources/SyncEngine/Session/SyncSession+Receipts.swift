import SyncStreams

extension SyncSession {
    public func isPending(_ receipt: WriteReceipt) -> Bool { false }

    public func receipt(for clientVersion: UInt64) -> WriteReceipt? { nil }

    public var pendingWrites: StateStream<PendingWrites> {
        StateStream(constant: PendingWrites(clientFileID: 0, clientVersions: 0..<0))
    }

    func waitUntilUploaded(_ receipt: WriteReceipt) async throws(SyncError) {}
}
