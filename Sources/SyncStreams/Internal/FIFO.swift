/// A first-in-first-out queue: a ring buffer over a contiguous array whose size is a power of two.
///
/// Appending and popping move no other element (a queue that a drain keeps behind a flood of sends
/// would otherwise shift its whole backlog every so often); the storage doubles when full, copying the
/// elements once, in order. Popping empties the slot, so a popped element is released by whoever took
/// it, not by the queue.
@usableFromInline
struct FIFO<Element> {
    @usableFromInline var storage: ContiguousArray<Element?> = []
    /// The slot of the oldest element.
    @usableFromInline var head = 0
    @usableFromInline var count = 0

    @inlinable init() {}

    @inlinable var isEmpty: Bool { count == 0 }

    /// The slot of the element `offset` places after the oldest.
    @inlinable @inline(__always)
    func slot(_ offset: Int) -> Int { (head &+ offset) & (storage.count &- 1) }

    @inlinable
    mutating func append(_ element: Element) {
        if count == storage.count { grow() }
        storage[slot(count)] = element
        count += 1
    }

    @inlinable
    mutating func popFirst() -> Element? {
        guard count > 0 else { return nil }
        let element = storage[head].take()
        head = slot(1)
        count -= 1
        if count == 0 { head = 0 }
        return element
    }

    /// Doubles the storage (4 slots at first), keeping the elements in order from slot 0.
    @inlinable
    mutating func grow() {
        var larger = ContiguousArray<Element?>(repeating: nil, count: Swift.max(4, storage.count * 2))
        for offset in 0..<count { larger[offset] = storage[slot(offset)].take() }
        storage = larger
        head = 0
    }

    /// The oldest element, which `popFirst()` would return.
    @inlinable
    var first: Element? { isEmpty ? nil : storage[head] }

    /// The most recently appended element that has not been popped.
    @inlinable
    var last: Element? { isEmpty ? nil : storage[slot(count - 1)] }

    /// Replaces the most recently appended element, returning the one replaced (for the caller to release
    /// outside its lock: releasing a value may run user code). The queue must not be empty.
    @inlinable
    mutating func replaceLast(with element: Element) -> Element? {
        precondition(!isEmpty, "FIFO.replaceLast on an empty queue")
        let index = slot(count - 1)
        let replaced = storage[index]
        storage[index] = element
        return replaced
    }

    /// The queued elements, oldest first, without removing them.
    @inlinable
    var elements: [Element] { (0..<count).map { storage[slot($0)]! } }
}

extension FIFO: Sendable where Element: Sendable {}
