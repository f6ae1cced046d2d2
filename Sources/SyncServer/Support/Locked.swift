#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value guarded by a heap-allocated pthread mutex.
///
/// Why pthreads and not `Synchronization.Mutex`: ThreadSanitizer on Linux understands pthread mutexes but
/// not `Mutex`. The mutex lives on the heap so its address never moves, as pthreads require.
///
/// Rule for every user: never call out (into a transport, a task, user code) while holding it.
final class Locked<State>: @unchecked Sendable {
    // @unchecked Sendable: `state` is only read or written inside `withLock`, under `mutex`.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var state: State

    init(_ state: State) {
        self.state = state
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the state.
    func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}
