#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A non-recursive mutual-exclusion lock over a heap-allocated pthread mutex.
///
/// Why pthreads and not `Synchronization.Mutex`: ThreadSanitizer on Linux understands pthread mutexes but
/// misreports `Mutex`, and the TSan run is part of CI. The mutex lives on the heap so its address never
/// moves, as pthreads require.
///
/// Rule for every user of this type: never call out (into user code, a stream, or an executor) while
/// holding it.
final class Lock: @unchecked Sendable {
    // @unchecked Sendable: the only stored property is an immutable pointer, and the pointee is only ever
    // touched through the pthread API, which is thread-safe.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    @inline(__always)
    func lock() { pthread_mutex_lock(mutex) }

    @inline(__always)
    func unlock() { pthread_mutex_unlock(mutex) }

    @inline(__always)
    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// A value guarded by a `Lock`.
final class Locked<State>: @unchecked Sendable {
    // @unchecked Sendable: `state` is only read or written inside `withLock`, under `lock`. `State` itself
    // need not be Sendable for the lock's sake, but callers must only store values that may cross threads.
    private let lock = Lock()
    private var state: State

    init(_ state: State) { self.state = state }

    @inline(__always)
    func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}
