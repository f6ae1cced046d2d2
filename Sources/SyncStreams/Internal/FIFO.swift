/// A first-in-first-out queue over a contiguous array with a moving head.
///
/// Pushing appends; popping advances the head and, once the queue is empty, resets it while keeping the
/// storage, so a queue that is filled and drained in turn allocates only while it grows.
@usableFromInline
struct FIFO<Element> {
    @usableFromInline var storage: ContiguousArray<Element?> = []
    @usableFromInline var head = 0

    @inlinable init() {}

    @inlinable var isEmpty: Bool { head == storage.count }

    @inlinable var count: Int { storage.count - head }

    @inlinable
    mutating func append(_ element: Element) { storage.append(element) }

    @inlinable
    mutating func popFirst() -> Element? {
        guard head < storage.count else { return nil }
        let element = storage[head].take()
        head += 1
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64 && head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }

    /// The oldest element, which `popFirst()` would return.
    @inlinable
    var first: Element? { isEmpty ? nil : storage[head] }

    /// The most recently appended element that has not been popped.
    @inlinable
    var last: Element? { isEmpty ? nil : storage[storage.count - 1] }

    /// Replaces the most recently appended element, returning the one replaced (for the caller to release
    /// outside its lock: releasing a value may run user code). The queue must not be empty.
    @inlinable
    mutating func replaceLast(with element: Element) -> Element? {
        precondition(!isEmpty, "FIFO.replaceLast on an empty queue")
        let replaced = storage[storage.count - 1]
        storage[storage.count - 1] = element
        return replaced
    }

    /// The queued elements, oldest first, without removing them.
    @inlinable
    var elements: [Element] { storage[head...].map { $0! } }
}

extension FIFO: Sendable where Element: Sendable {}
