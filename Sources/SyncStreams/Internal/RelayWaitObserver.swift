import Synchronization

#if DEBUG
    /// A test hook: which threads are waiting, right now, in an `invalidate()` for a callback running on
    /// another thread — so a test can hold a callback until the waiting path really runs. Touched only on that
    /// (rare) path, and compiled only into debug builds (the tests'): release builds have no trace of it.
    @usableFromInline
    enum RelayWaitObserver {
        @usableFromInline static let waiting = Locked<[UInt: Int]>([:])

        @usableFromInline
        static func willWait() { waiting.withLock { $0[ThreadID.current.raw, default: 0] += 1 } }

        @usableFromInline
        static func didWait() {
            waiting.withLock { waiting in
                let thread = ThreadID.current.raw
                waiting[thread, default: 1] -= 1
                if waiting[thread] == 0 { waiting[thread] = nil }
            }
        }

        /// Runs, if set, on a waiting thread each time it is about to sleep waiting for a callback's position
        /// to move: a test holds the waiter there to open the window between its check and its sleep.
        @usableFromInline static let sleepHook = Locked<(@Sendable (ThreadID) -> Void)?>(nil)

        @usableFromInline
        static func willSleep() {
            if let hook = sleepHook.withLock({ $0 }) { hook(ThreadID.current) }
        }

        /// Whether `thread` is waiting in an `invalidate()` now.
        static func isWaiting(_ thread: ThreadID) -> Bool { waiting.withLock { $0[thread.raw] != nil } }
    }
#endif
