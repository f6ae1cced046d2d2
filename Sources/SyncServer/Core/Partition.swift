/// One partition's log as the core holds it, the sessions bound to it, and a FIFO gate that serialises
/// the partition's operations that wait for the store. Owned by `ServerCore`; used only on its executor.
final class Partition {
    let name: String
    /// Whether `log` holds what the store holds.
    private(set) var isLoaded = false
    /// Entries in server-version order; entry `i` has server version `i + 1`.
    private(set) var log: [StoredChangeset] = []
    /// The highest client version integrated per client file.
    private(set) var lastClientVersion: [UInt64: UInt64] = [:]
    /// Sessions receiving the partition's new entries.
    var subscribers: [SessionKey: BoundSession] = [:]

    private var isBusy = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    init(name: String) { self.name = name }

    /// The server version of the last entry (0 for an empty log).
    var latestVersion: UInt64 { UInt64(log.count) }

    /// The server version the next integrated changeset gets.
    var nextServerVersion: UInt64 { latestVersion + 1 }

    /// Adopts a log loaded from the store after checking its versions are 1, 2, 3, ….
    func restore(from loaded: [StoredChangeset]) throws(PartitionLogError) {
        for (index, entry) in loaded.enumerated() where entry.serverVersion != UInt64(index) + 1 {
            throw PartitionLogError(
                partition: name,
                expectedServerVersion: UInt64(index) + 1,
                foundServerVersion: entry.serverVersion
            )
        }
        log = []
        lastClientVersion = [:]
        append(loaded)
        isLoaded = true
    }

    /// Appends entries that follow the log (already stored durably).
    func append(_ entries: [StoredChangeset]) {
        log.append(contentsOf: entries)
        for entry in entries {
            lastClientVersion[entry.clientFileID] = max(lastClientVersion[entry.clientFileID] ?? 0, entry.clientVersion)
        }
    }

    /// Waits until no other operation holds the partition, then holds it (first come, first served).
    func acquire(isolation: isolated (any Actor)? = #isolation) async {
        if isBusy {
            await withCheckedContinuation(isolation: isolation) { waiters.append($0) }
        } else {
            isBusy = true
        }
    }

    /// Lets the next waiting operation hold the partition, or frees it.
    func release() {
        if waiters.isEmpty {
            isBusy = false
        } else {
            waiters.removeFirst().resume()
        }
    }
}
