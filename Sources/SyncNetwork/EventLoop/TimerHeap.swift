/// The event loop's timers: a binary min-heap on (deadline, id), so scheduling and running a timer cost
/// O(log n) and finding the next deadline O(1), however many connections have timers. Cancelling marks the
/// id; a cancelled entry is dropped when it reaches the top.
struct TimerHeap<Value> {
    private struct Entry {
        var deadline: ContinuousClock.Instant
        var id: UInt64
        var value: Value

        func precedes(_ other: Entry) -> Bool { (deadline, id) < (other.deadline, other.id) }
    }

    private var entries: [Entry] = []
    /// Ids in `entries` that are cancelled, and those that are not.
    private var cancelled: Set<UInt64> = []
    private var live: Set<UInt64> = []
    private var nextID: UInt64 = 0

    /// Timers scheduled and neither run nor cancelled.
    var count: Int { live.count }

    /// The id of the latest timer inserted (0 before the first).
    var newestID: UInt64 { nextID }

    /// Adds `value` due at `deadline`; returns its id (ids grow, so equal deadlines run in insertion order).
    mutating func insert(deadline: ContinuousClock.Instant, _ value: Value) -> UInt64 {
        nextID += 1
        entries.append(Entry(deadline: deadline, id: nextID, value: value))
        live.insert(nextID)
        siftUp(entries.count - 1)
        return nextID
    }

    /// Cancels the timer `id` if it has not run.
    mutating func cancel(_ id: UInt64) {
        guard live.remove(id) != nil else { return }
        cancelled.insert(id)
        dropCancelledTop()
    }

    /// The earliest deadline of a live timer.
    var earliest: ContinuousClock.Instant? {
        mutating get {
            dropCancelledTop()
            return entries.first?.deadline
        }
    }

    /// Removes and returns the earliest timer due at `now` among those inserted up to id `newest`, or
    /// `nil`. Popping one at a time and running it before the next lets a timer cancel a later one due in
    /// the same round; `newest` keeps timers inserted meanwhile for a later round.
    mutating func popDue(now: ContinuousClock.Instant, insertedThrough newest: UInt64 = .max) -> Value? {
        dropCancelledTop()
        guard let first = entries.first, first.deadline <= now, first.id <= newest else { return nil }
        removeTop()
        live.remove(first.id)
        dropCancelledTop()
        return first.value
    }

    /// Forgets every timer.
    mutating func removeAll() {
        entries = []
        cancelled = []
        live = []
    }

    private mutating func dropCancelledTop() {
        while let first = entries.first, cancelled.contains(first.id) {
            cancelled.remove(first.id)
            removeTop()
        }
    }

    private mutating func removeTop() {
        let last = entries.removeLast()
        guard !entries.isEmpty else { return }
        entries[0] = last
        siftDown(0)
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].precedes(entries[parent]) else { return }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var first = parent
            if left < entries.count, entries[left].precedes(entries[first]) { first = left }
            if right < entries.count, entries[right].precedes(entries[first]) { first = right }
            guard first != parent else { return }
            entries.swapAt(parent, first)
            parent = first
        }
    }
}
