import Dispatch

/// A dispatch queue runs stream work asynchronously; a serial queue keeps it in order.
///
/// `now` is the monotonic clock; delays use `asyncAfter` with a cancellable work item.
extension DispatchQueue: StreamExecutor {
    public func execute(_ work: @escaping @Sendable () -> Void) {
        async(execute: work)
    }

    public func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
        let item = WorkItem(DispatchWorkItem(block: work))
        asyncAfter(deadline: .now() + .nanoseconds(delay.clampedNanoseconds), execute: item.item)
        return ScheduledWork { item.item.cancel() }
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
