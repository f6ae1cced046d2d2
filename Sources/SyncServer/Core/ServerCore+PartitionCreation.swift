/// Creating partitions: the store's files and fsyncs are not free, so a bind creates a partition only when
/// its credential may write it (`PartitionPermission.write`) and, with `maximumPartitionsInStore`, while
/// the store holds fewer partitions than that.
///
/// The server reads the store's count once (`PartitionStore.partitionCount()`), before it creates its
/// first partition, and from then on counts the partitions it creates and those being created. The check
/// and the reservation happen on the actor without suspending between them, so binds of new partitions
/// from many connections at once create at most the maximum; binds of one name are serialised by the
/// partition's gate, so that name counts once.
///
/// That count is this server's: servers sharing a store see each other's creations only in the store.
/// Such a store enforces the cap itself where it creates a partition and throws `PartitionCreationRefused`
/// past it; the bind is then refused as here (`permissionDenied`, see `ServerCore.bind`), and the
/// reservation is released without counting a partition (`creationEnded(of:)`: the store does not hold it).
extension ServerCore {
    /// What a bind may do with a partition that is not loaded.
    enum LoadAdmission {
        /// Load it; `creates` when the store does not hold it (`creationEnded` must follow the load).
        case load(creates: Bool)
        /// Refuse the bind with `permissionDenied` (retrying cannot help) for this reason.
        case refuse(String)
        /// The store could not tell; refuse with `internalError` (retry later).
        case fail(String)
    }

    /// Whether a bind with `permission` may load `partition`, and whether that creates it. Call holding the
    /// partition's gate, before loading it; a creation is reserved until `creationEnded`.
    func admitLoad(of partition: Partition, permission: PartitionPermission) async -> LoadAdmission {
        guard !partition.isLoaded else { return .load(creates: false) }
        let limit = configuration.maximumPartitionsInStore
        var held: Int?
        if limit != nil {
            switch await countStorePartitions() {
            case .success(let count): held = count
            case .failure(let error): return .fail("could not count the store's partitions: \(error)")
            }
        }
        // Nothing to decide: a writer may create, and the store's partitions are not limited.
        guard permission == .read || held != nil else { return .load(creates: false) }
        do {
            if try await store.holdsPartition(partition.name) { return .load(creates: false) }
        } catch {
            return .fail("could not tell whether the store holds \(partition.name): \(error)")
        }
        guard permission == .write else {
            return .refuse("the credential may read \(partition.name) but not create it")
        }
        guard let limit, let held else { return .load(creates: false) }
        guard held + partitionsCreated + creationsInProgress < limit else {
            logger.log(
                .warn, Self.category,
                "the store holds its maximum of \(limit) partitions: \(partition.name.escapedForLog) is not created")
            return .refuse(
                "the server holds at most \(limit) partitions and creates no more: \(partition.name) is not created")
        }
        creationsInProgress += 1
        return .load(creates: true)
    }

    /// A creation reserved by `admitLoad` finished: counted as a partition held if it succeeded.
    func creationEnded(succeeded: Bool) {
        creationsInProgress -= 1
        if succeeded { partitionsCreated += 1 }
    }

    /// A creation reserved by `admitLoad` failed to load: counted as a partition held if the store made
    /// it anyway (a log written before the failure), or unless the store cannot tell.
    func creationEnded(of partition: Partition) async {
        let made = (try? await store.holdsPartition(partition.name)) ?? true
        creationEnded(succeeded: made)
    }

    /// The store's count of its partitions, read once (again after a failure); `nil` when it does not
    /// count them.
    private func countStorePartitions() async -> Result<Int?, any Error> {
        let task =
            storePartitionCount
            ?? Task { [store] in
                do { return .success(try await store.partitionCount()) } catch { return .failure(error) }
            }
        storePartitionCount = task
        let result = await task.value
        if case .failure = result, storePartitionCount == task { storePartitionCount = nil }
        return result
    }
}
