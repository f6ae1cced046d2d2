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
/// not `Mutex`, and the TSan run is part of CI. The mutex lives on the heap so its address never moves,
/// as pthreads require. An uncontended lock/unlock pair costs about 3 ns on the reference machine.
///
/// Rule for every user of this type: never call out (into user code, downstream, or an executor) while
/// holding it.
@usableFromInline
final class Lock: @unchecked Sendable {
    // @unchecked Sendable: the pointee is only ever touched through the pthread API, which is thread-safe.
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>

    @inlinable
    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    @inlinable
    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    @inlinable @inline(__always)
    func lock() { pthread_mutex_lock(mutex) }

    @inlinable @inline(__always)
    func unlock() { pthread_mutex_unlock(mutex) }

    @inlinable @inline(__always)
    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// A value guarded by a `Lock`.
///
/// Visible to the package's other modules (`package` access), so the package has one lock; not public API.
@usableFromInline
package final class Locked<State: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `state` is only read or written inside `withLock`, under `lock`; it is itself
    // Sendable, so what `withLock` returns or captures may cross threads.
    @usableFromInline let lock = Lock()
    @usableFromInline var state: State

    @inlinable
    package init(_ state: State) { self.state = state }

    @inlinable @inline(__always)
    package func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}
