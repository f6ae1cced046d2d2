import SyncStreams

/// A session's synced changesets as a stream: a new subscriber first receives every changeset synced so
/// far, in server-version order, then each new one as it is synced — none twice, none skipped.
///
/// The changesets live in one append-only array; what is published is only their count, through a
/// `CurrentValueSubject`, so each subscriber delivers the slice between the count it reached and the new
/// one. Appending never copies the array, however many subscribers there are.
final class ChangesetFeed: Sendable {
    private let changesets = Locked<[Changeset]>([])
    private let count = CurrentValueSubject<Int, Never>(0)

    /// Appends `new` and publishes them. Called from one serial context (the session's actor).
    func publish(_ new: [Changeset]) {
        guard !new.isEmpty else { return }
        let total = changesets.withLock { all -> Int in
            all.append(contentsOf: new)
            return all.count
        }
        count.send(total)
    }

    var stream: AnySyncStream<Changeset, Never> {
        AnySyncStream { [changesets, count] onValue, onCompletion in
            let cursor = Cursor()
            return count.subscribe(
                onValue: { total in
                    // Deliveries to one subscriber are serialized, so `cursor` is never touched concurrently.
                    let from = cursor.delivered
                    guard total > from else { return }
                    let batch = changesets.withLock { Array($0[from..<total]) }
                    cursor.delivered = total
                    for changeset in batch { onValue(changeset) }
                },
                onCompletion: onCompletion
            )
        }
    }

    /// How far one subscriber has got.
    private final class Cursor: @unchecked Sendable {
        // @unchecked Sendable: only read and written inside one subscription's callbacks, which the stream
        // contract serializes.
        var delivered = 0
    }
}
