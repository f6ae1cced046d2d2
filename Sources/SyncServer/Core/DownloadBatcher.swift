import SyncWire

/// Splits a run of log entries into the `download` messages one session receives.
enum DownloadBatcher {
    /// The downloads carrying `entries` (consecutive, in server-version order) to `session`.
    ///
    /// Entries of the session's own client file become `.acknowledged`, others `.changeset`. Each message
    /// carries at least one changeset and, beyond the first, at most `maximumBytes` changeset bytes;
    /// acknowledgements join the message being filled. `remainingBytes` is the run's changeset bytes
    /// not yet sent after each message, so the last message has 0. An empty run gives one empty message.
    static func downloads(
        of entries: some Collection<StoredChangeset>,
        to sessionID: UInt32,
        clientFileID: UInt64,
        maximumBytes: Int
    ) -> [Download] {
        var remaining = entries.reduce(UInt64(0)) { total, entry in
            entry.clientFileID == clientFileID ? total : total + UInt64(entry.data.count)
        }
        var downloads: [Download] = []
        var batch: [DownloadEntry] = []
        var batchBytes = 0
        var batchHasChangeset = false

        func flush() {
            remaining -= UInt64(batchBytes)
            downloads.append(Download(sessionID: sessionID, entries: batch, remainingBytes: remaining))
            batch = []
            batchBytes = 0
            batchHasChangeset = false
        }

        for entry in entries {
            if entry.clientFileID == clientFileID {
                batch.append(.acknowledged(serverVersion: entry.serverVersion, clientVersion: entry.clientVersion))
                continue
            }
            if batchHasChangeset && batchBytes + entry.data.count > maximumBytes { flush() }
            batch.append(.changeset(serverVersion: entry.serverVersion, data: entry.data))
            batchBytes += entry.data.count
            batchHasChangeset = true
        }
        if !batch.isEmpty || downloads.isEmpty { flush() }
        return downloads
    }
}
