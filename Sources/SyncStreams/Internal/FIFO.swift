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

    /// The most recently appended element that has not been popped.
    @inlinable
    var last: Element? {
        get { isEmpty ? nil : storage[storage.count - 1] }
        set {
            precondition(!isEmpty, "FIFO.last set on an empty queue")
            storage[storage.count - 1] = newValue
        }
    }

    /// The queued elements, oldest first, without removing them.
    @inlinable
    var elements: [Element] { storage[head...].map { $0! } }

    /// Removes every element, returning them in order.
    @inlinable
    mutating func removeAll() -> [Element] {
        var result: [Element] = []
        result.reserveCapacity(count)
        while let element = popFirst() { result.append(element) }
        return result
    }
}

extension FIFO: Sendable where Element: Sendable {}
