import SyncWire

/// Decides which run of a partition's log goes into a session's next `download` message.
enum DownloadBatcher {
    /// The framing of a `download` message around its entries: type, session, count, remaining bytes, and
    /// the history id (present in a bind's first download), the count of acknowledgement digests.
    static let messageOverhead = 1 + 4 + 4 + 8 + 1 + 8 + 4
    /// The encoded size of an acknowledgement entry, with its digest.
    static let acknowledgementSize = 1 + 8 + 8 + 4
    /// The encoded size of a changeset entry without its bytes.
    static let changesetOverhead = 1 + 8 + 4

    /// The versions of the next message to `clientFileID`, starting at `first`, or `nil` when `first` is
    /// past `latest`.
    ///
    /// Entries of the session's own client file become acknowledgements (no bytes); others are changesets.
    /// The run ends before a changeset that would take the message's changeset bytes past `maximumBytes`
    /// (unless the message has no changeset yet: one changeset always fits), or before any entry that would
    /// take the encoded message past `maximumMessageSize`.
    static func nextRun(
        from first: UInt64,
        through latest: UInt64,
        clientFileID: UInt64,
        maximumBytes: Int,
        maximumMessageSize: Int,
        entry: (UInt64) -> StoredChangesetSummary
    ) -> ClosedRange<UInt64>? {
        guard first <= latest else { return nil }
        var size = messageOverhead
        var changesetBytes = 0
        var hasChangeset = false
        var last = first - 1
        for version in first...latest {
            let summary = entry(version)
            if summary.clientFileID == clientFileID {
                guard size + acknowledgementSize <= maximumMessageSize || last < first else { break }
                size += acknowledgementSize
            } else {
                let entrySize = changesetOverhead + summary.byteCount
                if hasChangeset && changesetBytes + summary.byteCount > maximumBytes { break }
                if last >= first && size + entrySize > maximumMessageSize { break }
                size += entrySize
                changesetBytes += summary.byteCount
                hasChangeset = true
            }
            last = version
        }
        return first...last
    }
}
