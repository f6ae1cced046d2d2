/// A relay's subscribers, in attach order, in memory the relay manages itself so that a drain can read
/// them outside the lock without retaining anything.
///
/// Why not a `ContiguousArray<Subscriber>`: a drain delivers to the subscribers *outside* the relay's
/// lock, and retaining the array (or each subscriber) per delivery would cost two atomic operations each —
/// as much as the rest of a delivery. Reading an array's storage outside `withUnsafeBufferPointer`'s
/// closure, or rebinding it to another type while other code reads it, is undefined behaviour. Here the
/// buffer is a raw allocation whose lifetime this type controls, holding `Unmanaged` references
/// (trivial values, no rebinding), so the rules that make the drain safe are ordinary ones:
///
/// 1. **Ownership.** The list holds one strong reference (+1) on each subscriber it contains, taken in
///    `append` and given back by `remove` / `removeAll` to the caller, who releases it after unlocking
///    (a release can run a deinit, i.e. user code).
/// 2. **A borrowed buffer is never changed or freed.** `borrow()` hands a drain the current buffer and
///    marks it shared; while shared, `append` and `remove` copy into a new buffer instead of writing in
///    place, and park the old one in `retiredBuffers`. The drain ends its borrow at its next transition
///    under the lock (`endBorrow()`), which returns the retired buffers for the drain to free after
///    unlocking.
/// 3. **A subscriber read from a borrowed buffer is alive.** A subscriber removed while its buffer is
///    borrowed is not released by the caller but kept in `deferredReleases` until `endBorrow()`: so every
///    reference in a borrowed buffer is backed by a +1 until the drain is done with the buffer, and
///    `_withUnsafeGuaranteedRef` (a call without retain) on it is sound.
///
/// All mutation happens under the owning relay's lock; the only access outside it is a drain reading a
/// borrowed buffer, which rule 2 keeps immutable. ThreadSanitizer and AddressSanitizer runs exercise
/// these paths (subscribe/invalidate racing deliveries in the contract and stress tests).
@usableFromInline
struct SubscriberList<Output: Sendable, Failure: Error> {
    @usableFromInline typealias Element = Unmanaged<Subscriber<Output, Failure>>

    @usableFromInline var base: UnsafeMutablePointer<Element>?
    @usableFromInline var count = 0
    @usableFromInline var capacity = 0
    /// The current buffer is being read by a drain (rule 2).
    @usableFromInline var isBorrowed = false
    /// Buffers replaced while borrowed, to be freed when the borrow ends.
    @usableFromInline var retiredBuffers: [UnsafeMutablePointer<Element>] = []
    /// Subscribers removed while borrowed, whose +1 is released when the borrow ends.
    @usableFromInline var deferredReleases: [Element] = []

    @inlinable
    init() {}

    @inlinable
    var isEmpty: Bool { count == 0 }

    /// Nothing retired or deferred: ending the borrow has nothing to hand back. (A flag, not two array
    /// checks: it is read on every delivery.)
    @usableFromInline var hasNoLeftovers = true

    /// Adds `subscriber` at the end, taking a strong reference on it.
    @inlinable
    mutating func append(_ subscriber: Subscriber<Output, Failure>) {
        if isBorrowed || count == capacity {
            reallocate(capacity: count == capacity ? Swift.max(4, capacity * 2) : capacity)
        }
        (base! + count).initialize(to: Unmanaged.passRetained(subscriber))
        count += 1
    }

    /// Removes `subscriber` if present. Returns its reference for the caller to release after unlocking,
    /// or nil when it was not present or when its release is deferred until the borrow ends.
    @inlinable
    mutating func remove(_ subscriber: Subscriber<Output, Failure>) -> Element? {
        guard let base, let index = firstIndex(of: subscriber) else { return nil }
        let removed = base[index]
        if isBorrowed {
            // Copy everything but the removed one into a new buffer; the drain keeps reading the old one.
            let fresh = UnsafeMutablePointer<Element>.allocate(capacity: Swift.max(capacity, 1))
            fresh.initialize(from: base, count: index)
            (fresh + index).initialize(from: base + index + 1, count: count - index - 1)
            retiredBuffers.append(base)
            self.base = fresh
            count -= 1
            deferredReleases.append(removed)
            hasNoLeftovers = false
            return nil
        }
        // Unmanaged references are trivial values: shifting the tail left is a plain (overlapping) copy.
        for position in index..<(count - 1) { base[position] = base[position + 1] }
        count -= 1
        return removed
    }

    /// Removes every subscriber, returning their references (released by the caller after unlocking, or
    /// deferred while borrowed, as for `remove`). The buffer stays for the borrow that reads it.
    @inlinable
    mutating func removeAll() -> [Element] {
        guard let base, count > 0 else { return [] }
        let removed = Array(UnsafeBufferPointer(start: base, count: count))
        if isBorrowed {
            retiredBuffers.append(base)
            self.base = nil
            capacity = 0
            count = 0
            deferredReleases.append(contentsOf: removed)
            hasNoLeftovers = false
            return []
        }
        count = 0
        return removed
    }

    @inlinable
    func firstIndex(of subscriber: Subscriber<Output, Failure>) -> Int? {
        guard let base else { return nil }
        let target = Unmanaged.passUnretained(subscriber).toOpaque()
        for index in 0..<count where base[index].toOpaque() == target { return index }
        return nil
    }

    /// The current subscribers, for a drain to read outside the lock until `endBorrow()`.
    @inlinable
    mutating func borrow() -> BorrowedSubscribers<Output, Failure> {
        isBorrowed = true
        return BorrowedSubscribers(base: UnsafePointer(base), count: count)
    }

    /// The drain is done with its borrowed buffer. Returns what to free and release after unlocking.
    @inlinable
    mutating func endBorrow() -> SubscriberListLeftovers<Output, Failure>? {
        isBorrowed = false
        guard !hasNoLeftovers else { return nil }
        defer {
            retiredBuffers = []
            deferredReleases = []
            hasNoLeftovers = true
        }
        return SubscriberListLeftovers(buffers: retiredBuffers, releases: deferredReleases)
    }

    @inlinable
    mutating func reallocate(capacity newCapacity: Int) {
        let fresh = UnsafeMutablePointer<Element>.allocate(capacity: newCapacity)
        if let base {
            fresh.initialize(from: base, count: count)
            if isBorrowed {
                retiredBuffers.append(base)
                hasNoLeftovers = false
            } else {
                base.deallocate()
            }
        }
        base = fresh
        capacity = newCapacity
    }

    /// Frees the buffer and releases every subscriber: the owning relay's deinit (nothing borrows then).
    @inlinable
    mutating func destroy() {
        for index in 0..<count { base![index].release() }
        base?.deallocate()
        for buffer in retiredBuffers { buffer.deallocate() }
        for element in deferredReleases { element.release() }
        base = nil
        count = 0
        retiredBuffers = []
        deferredReleases = []
        hasNoLeftovers = true
    }
}

/// What a drain frees and releases once it is done with a borrowed buffer, outside the lock.
@usableFromInline
struct SubscriberListLeftovers<Output: Sendable, Failure: Error> {
    @usableFromInline let buffers: [UnsafeMutablePointer<Unmanaged<Subscriber<Output, Failure>>>]
    @usableFromInline let releases: [Unmanaged<Subscriber<Output, Failure>>]

    @inlinable
    init(
        buffers: [UnsafeMutablePointer<Unmanaged<Subscriber<Output, Failure>>>],
        releases: [Unmanaged<Subscriber<Output, Failure>>]
    ) {
        self.buffers = buffers
        self.releases = releases
    }

    /// Frees the buffers and releases the subscribers (may run deinits: call outside any lock).
    @inlinable
    func dispose() {
        for buffer in buffers { buffer.deallocate() }
        for element in releases { element.release() }
    }
}

/// A drain's read-only view of a relay's subscribers (see `SubscriberList`, rules 2 and 3).
@usableFromInline
struct BorrowedSubscribers<Output: Sendable, Failure: Error>: @unchecked Sendable {
    // @unchecked Sendable: handed from the thread that borrowed it (under the relay's lock) to the thread
    // that drains, which may be an executor's; the buffer is immutable while borrowed.
    @usableFromInline let base: UnsafePointer<Unmanaged<Subscriber<Output, Failure>>>?
    @usableFromInline let count: Int

    @inlinable
    init(base: UnsafePointer<Unmanaged<Subscriber<Output, Failure>>>?, count: Int) {
        self.base = base
        self.count = count
    }

    @inlinable
    static var none: BorrowedSubscribers { BorrowedSubscribers(base: nil, count: 0) }

    /// The index of `subscriber` in this view, if present.
    @inlinable
    func firstIndex(of subscriber: Subscriber<Output, Failure>) -> Int? {
        guard let base else { return nil }
        let target = Unmanaged.passUnretained(subscriber).toOpaque()
        for index in 0..<count where base[index].toOpaque() == target { return index }
        return nil
    }
}
