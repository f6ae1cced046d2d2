extension Partition {
    /// Appends `newer`, entries another writer of a shared store appended after `latestVersion`, after
    /// checking that their versions continue the log without a gap (nothing is appended otherwise).
    func extend(with newer: [StoredChangesetSummary]) throws(PartitionLogError) {
        for (offset, entry) in newer.enumerated() where entry.serverVersion != latestVersion + UInt64(offset) + 1 {
            throw PartitionLogError(
                partition: name,
                expectedServerVersion: latestVersion + UInt64(offset) + 1,
                foundServerVersion: entry.serverVersion
            )
        }
        append(newer)
    }
}
