import Dispatch

/// A dispatch queue runs stream work asynchronously; a serial queue keeps it in order.
///
/// `now` is the monotonic clock; delays use `asyncAfter` with a cancellable work item.
extension DispatchQueue: StreamExecutor {
    public func execute(_ work: @escaping @Sendable () -> Void) {
        async(execute: work)
    }

    public func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
        // The closure sits in a slot the cancel handle empties, so cancelling releases what the work
        // captured at once; Dispatch itself keeps a cancelled item's block until its deadline.
        let slot = Locked<(@Sendable () -> Void)?>(work)
        let item = WorkItem(DispatchWorkItem { slot.withLock { $0.take() }?() })
        asyncAfter(deadline: .now() + .nanoseconds(delay.clampedNanoseconds), execute: item.item)
        return ScheduledWork {
            item.item.cancel()
            _ = slot.withLock { $0.take() }
        }
    }

    public var now: StreamInstant { .monotonicNow }
}

extension StreamExecutor where Self == DispatchQueue {
    /// The main dispatch queue.
    public static var main: DispatchQueue { DispatchQueue.main }
}

/// A dispatch work item shared with the cancel handle.
private struct WorkItem: @unchecked Sendable {
    // @unchecked Sendable: DispatchWorkItem is documented thread-safe (`cancel()` may be called from any
    // thread); Dispatch on Linux just does not annotate it.
    let item: DispatchWorkItem
    init(_ item: DispatchWorkItem) { self.item = item }
}
