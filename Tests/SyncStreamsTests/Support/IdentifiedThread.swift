import Dispatch

@testable import SyncStreams

/// Runs `body` on a new thread and reports the thread's identity (for `RelayWaitObserver`).
func startIdentifiedThread(
    _ body: @escaping @Sendable () -> Void
) -> (
    done: DispatchSemaphore, thread: @Sendable () -> ThreadID?
) {
    let identity = LockedBox<ThreadID?>(nil)
    let done = startThread {
        identity.value = ThreadID.current
        body()
    }
    return (done, { identity.value })
}

/// Waits until the thread is parked in an `invalidate()` waiting for a callback.
func waitUntilWaiting(_ thread: @Sendable () -> ThreadID?) -> Bool {
    eventually { thread().map(RelayWaitObserver.isWaiting) ?? false }
}
