import Dispatch
import Foundation
import SyncStreams
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// The off-pool rule (docs/TESTING.md): Swift's cooperative pool is as wide as the machine has cores (2 in
// CI), and the whole suite's async tests, the server's tasks and the engine's actors share it. A test that
// blocks a pool thread (a semaphore, a thread join, `concurrentPerform`, a blocking read, a spin, an fsync
// loop, or simply seconds of synchronous CPU work) starves everything behind it, which then times out.
// So blocking work runs on a thread of its own: a piece of it with `offPool`, a whole synchronous suite
// with the `.offPool` trait. Both start a real `Thread` (not `DispatchQueue.global()`, whose width on
// Linux is limited too).

/// Runs blocking `body` on a new thread of its own and returns what it returns or throws; the awaiting
/// task is suspended meanwhile, holding no thread. If `body` has not finished after `seconds` (scaled
/// under a sanitizer), throws `WaitTimedOut` naming `what` (the thread is left to finish on its own).
package func offPool<T: Sendable>(
    _ what: String = "blocking work off the cooperative pool",
    seconds: Double = defaultWaitSeconds,
    _ body: @escaping @Sendable () throws -> T
) async throws -> T {
    let limit = Duration.milliseconds(Int(seconds * BuildFlavor.deadlineScale * 1000))
    // The result goes through a pthread mutex (not only the continuation) so that ThreadSanitizer sees the
    // hand-off from the thread to the task (see `BlockingQueue`).
    let slot = Locked<(continuation: CheckedContinuation<Void, Never>?, result: Result<T, any Error>?)>((nil, nil))
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        slot.withLock { $0.continuation = continuation }
        startThread(named: what) {
            let result = Result { try body() }
            slot.withLock { state -> CheckedContinuation<Void, Never>? in
                guard state.result == nil else { return nil }
                state.result = result
                defer { state.continuation = nil }
                return state.continuation
            }?.resume()
        }
        let (whole, attoseconds) = limit.components
        let nanoseconds = Int(whole) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) {
            slot.withLock { state -> CheckedContinuation<Void, Never>? in
                guard state.result == nil else { return nil }
                state.result = .failure(WaitTimedOut(what: what, limit: limit))
                defer { state.continuation = nil }
                return state.continuation
            }?.resume()
        }
    }
    // Set before the continuation was resumed, under the lock.
    return try slot.withLock { $0.result! }.get()
}

/// Starts `body` on a new thread named `name` (a 4 MiB stack: test bodies recurse through operator chains).
///
/// A `background` thread runs at a lower scheduling priority (nice 10 on Linux, inherited by the threads it
/// starts): the `.offPool` suites' stress loops then take the cores only when the cooperative pool's
/// threads do not want them, so under ThreadSanitizer (5–15× slower) they cannot starve the async tests
/// running beside them into their deadlines.
package func startThread(named name: String, background: Bool = false, _ body: @escaping @Sendable () -> Void) {
    let short = String(name.prefix(15))
    let thread = Thread {
        // Named from inside: on Linux a name given before `start()` does not reach the thread.
        Thread.current.name = short
        DedicatedThread.mark(name)
        #if canImport(Glibc)
            // On Linux the nice value is per thread; `who` 0 is the calling thread.
            if background { _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10) }
        #endif
        body()
    }
    thread.stackSize = 4 << 20
    thread.start()
}

/// Which thread `startThread(named:)` started the caller is on, if any: a pthread-specific value, so that
/// a test can prove where it runs (Foundation's `Thread.current.name` is not reliable for that on Linux).
package enum DedicatedThread {
    private final class Name {
        let value: String
        init(_ value: String) { self.value = value }
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// The name given to `startThread(named:)` for the calling thread, or nil on any other thread.
    package static var current: String? {
        pthread_getspecific(key).map { Unmanaged<Name>.fromOpaque($0).takeUnretainedValue().value }
    }

    fileprivate static func mark(_ name: String) {
        // Retained for the thread's lifetime (a few bytes per test thread, never released).
        pthread_setspecific(key, Unmanaged.passRetained(Name(name)).toOpaque())
    }
}

/// A task executor with one thread of its own: the jobs of the tasks that prefer it run there, one after
/// another, never on the cooperative pool. `stop()` ends the thread once its queue is empty.
package final class DedicatedThreadExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked Sendable: `jobs` and `stopping` are only touched under `mutex`.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var jobs: [UnownedJob] = []
    private var stopping = false

    package init(name: String, background: Bool = false) {
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, nil)
        startThread(named: name, background: background) { [self] in run() }
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        pthread_mutex_lock(mutex)
        jobs.append(job)
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }

    /// Ends the thread once the jobs already queued have run.
    package func stop() {
        pthread_mutex_lock(mutex)
        stopping = true
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }

    private func run() {
        while true {
            pthread_mutex_lock(mutex)
            while jobs.isEmpty && !stopping { pthread_cond_wait(condition, mutex) }
            let batch = jobs
            jobs = []
            pthread_mutex_unlock(mutex)
            if batch.isEmpty { return }  // stopping, nothing left
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }
}

/// Runs each test of the suite (or the test) it is given to on a thread of its own, through a
/// `DedicatedThreadExecutor`: a synchronous test, or an async one that blocks, then holds no thread of the
/// cooperative pool. For suites that block on semaphores, thread joins, `concurrentPerform` or spins.
package struct OffPoolTrait: TestTrait, SuiteTrait, TestScoping {
    package var isRecursive: Bool { true }

    package func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    package func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // At most as many of these tests at once as the machine has cores: they are the suite's CPU-heavy
        // ones (stress loops on several threads each), and run all at once they would take every core
        // from the cooperative pool's threads for a minute under TSan. Waiting here holds no thread.
        await Self.running.acquire()
        let executor = DedicatedThreadExecutor(name: test.name, background: true)
        defer {
            executor.stop()
            Self.running.release()
        }
        try await withTaskExecutorPreference(executor) { try await function() }
    }

    private static let running = AsyncSemaphore(permits: ProcessInfo.processInfo.activeProcessorCount)
}

/// A counting semaphore whose `acquire()` suspends the task (holding no thread) until a permit is free.
package final class AsyncSemaphore: Sendable {
    private let state: Locked<(permits: Int, waiters: [CheckedContinuation<Void, Never>])>

    package init(permits: Int) { state = Locked((max(permits, 1), [])) }

    package func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state -> Bool in
                guard state.permits > 0 else {
                    state.waiters.append(continuation)
                    return false
                }
                state.permits -= 1
                return true
            }
            if granted { continuation.resume() }
        }
    }

    package func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiters.isEmpty else {
                state.permits += 1
                return nil
            }
            return state.waiters.removeFirst()  // the permit passes to it
        }
        next?.resume()
    }
}

extension Trait where Self == OffPoolTrait {
    /// Each test runs on a thread of its own, off the cooperative pool (see `OffPoolTrait`).
    package static var offPool: Self { Self() }
}

/// A loopback TCP port that nothing listens on, held for as long as this lives: a socket bound to
/// 127.0.0.1 port 0 (the kernel picks a free port) that never listens, so a connection to it is refused,
/// and no other process can take the port meanwhile (unlike a port bound, closed and then reused).
package final class ReservedPort: Sendable {
    package let port: Int
    private let descriptor: Int32

    package init() throws {
        #if canImport(Glibc)
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
            let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard descriptor >= 0, bound else {
            if descriptor >= 0 { close(descriptor) }
            throw BindFailed(errno: errno)
        }
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(descriptor) }

    /// `socket`, `bind` or `getsockname` failed.
    package struct BindFailed: Error {
        package let errno: Int32
    }
}
