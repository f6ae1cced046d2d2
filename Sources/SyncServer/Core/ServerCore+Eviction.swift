import Synchronization

/// Evicting idle partitions, so that a server that has served many partitions holds memory and open
/// files only for those in use and a few recently used.
///
/// A partition is *live* while a session is bound to it or an operation holds or awaits its gate (or a
/// pump reads from it); `maximumPartitions` counts live partitions. When it stops being live it becomes
/// *idle*: it stays loaded, and the least recently used idle partitions beyond `maximumIdlePartitions`
/// are evicted — the eviction takes the partition's gate (so it waits for, and is waited for by, every
/// other operation on it), asks the store to `unload` it (a `FilePartitionStore` closes its file), forgets
/// its index, and drops it from the core unless something came to use it meanwhile. A bind that arrives
/// during an eviction waits for the gate and loads the partition again.
extension ServerCore {
    /// Partitions with a bound session or an operation in progress.
    var livePartitionCount: Int { partitions.count - idlePartitions.count - evictingPartitions.count }

    /// Whether `name` is loaded and in use (neither idle nor being evicted).
    func isLive(_ name: String) -> Bool {
        partitions[PartitionName(name)] != nil && !idlePartitions.contains(name)
            && !evictingPartitions.contains(PartitionName(name))
    }

    /// Lets the next operation waiting for the partition's gate hold it, or frees the gate; then notes the
    /// partition as idle if it is.
    func release(_ partition: Partition) {
        partition.release()
        noteIfIdle(partition)
    }

    /// If nothing uses `partition` any more: forgets it when it is not loaded (a load failed), or records
    /// it as the most recently used idle partition and starts evicting the least recently used ones
    /// beyond `maximumIdlePartitions`.
    func noteIfIdle(_ partition: Partition) {
        let name = partition.name
        let key = PartitionName(name)
        guard partition.isIdle, partitions[key] === partition, !evictingPartitions.contains(key) else { return }
        guard partition.isLoaded else {
            partitions.removeValue(forKey: key)
            metrics.partitionsLoaded.store(partitions.count, ordering: .relaxed)
            idlePartitions.remove(name)
            return
        }
        idlePartitions.touch(name)
        while idlePartitions.count > configuration.maximumIdlePartitions, let oldest = idlePartitions.removeOldest() {
            guard let victim = partitions[PartitionName(oldest)] else { continue }
            evictingPartitions.insert(PartitionName(oldest))
            Task { await self.evict(victim) }
        }
    }

    /// Unloads `partition` from the store and from memory once it holds the gate, unless it was taken
    /// into use again meanwhile; then drops it from the core if it is still unused.
    private func evict(_ partition: Partition) async {
        await partition.acquire()
        if partition.subscribers.isEmpty, partition.readers == 0, partition.isLoaded {
            await store.unload(partition.name)
            partition.unload()
            logger.log(.detail, Self.category, "evicted idle partition \(partition.name)")
        }
        evictingPartitions.remove(PartitionName(partition.name))
        release(partition)
    }
}
