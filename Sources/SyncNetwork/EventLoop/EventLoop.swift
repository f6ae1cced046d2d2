import Foundation
import SyncStreams

#if os(Linux)
    import CSyncNetwork
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Something an `EventLoop` tells when its descriptor is ready. Called on the loop's thread only.
protocol EventLoopHandler: AnyObject {
    func handle(_ readiness: Readiness)
}

/// One thread that waits on many non-blocking sockets at once (epoll on Linux, `poll` elsewhere) and runs
/// the handlers of those that are ready, the tasks handed to it from other threads, and its timers.
///
/// Everything registered with a loop — handlers, interests, timers — is touched only on its thread; other
/// threads reach it through `execute`. Handlers must never block: sockets are non-blocking, and file or
/// DNS work happens elsewhere. One loop serves every client connection of a process (`EventLoop.shared()`);
/// each networked server has one of its own.
///
/// Starting a loop needs two descriptors (its wake-up pipe) and, on Linux, an epoll instance: when the
/// process is out of descriptors, `init` throws `NetworkError.systemCall` rather than crashing.
final class EventLoop: @unchecked Sendable {
    // @unchecked Sendable: `pending` is locked; every other stored property is confined to the loop's thread.

    private static let sharedLoop = Locked<EventLoop?>(nil)

    /// The loop client connections share: started on first use, never stopped. When it cannot be started
    /// (no descriptors left), throws, and the next call tries again.
    static func shared() throws(NetworkError) -> EventLoop {
        let result = sharedLoop.withLock { loop -> Result<EventLoop, NetworkError> in
            if let loop { return .success(loop) }
            do throws(NetworkError) {
                let started = try EventLoop(name: "SyncNetwork.client-loop")
                loop = started
                return .success(started)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private let poller: any Poller
    private let wakeReader: Int32
    private let wakeWriter: Int32
    private let pending = Locked<(tasks: [@Sendable () -> Void], stopping: Bool)>(([], false))
    private var handlers: [Int32: any EventLoopHandler] = [:]
    /// Timers by deadline (a heap: O(log n) to schedule, run or cancel one, O(1) to find the next).
    private var timers = TimerHeap<() -> Void>()
    private let finished = Locked<[CheckedContinuation<Void, Never>]?>([])
    private let threadID = Locked<pthread_t?>(nil)
    /// One read buffer for every socket on the loop (they are read one at a time, on its thread), so a
    /// connection costs no buffer of its own while it is idle.
    let readBuffer: UnsafeMutableRawBufferPointer

    /// Starts a loop on a new thread named `name`, waiting with `poller` (default: epoll on Linux, `poll`
    /// elsewhere).
    ///
    /// - Throws: `NetworkError.systemCall` when the wake-up pipe or the epoll instance cannot be created
    ///   (typically `EMFILE`: the process is out of descriptors); nothing is left open then.
    init(name: String, poller: (any Poller)? = nil) throws(NetworkError) {
        #if os(Linux)
            if let poller { self.poller = poller } else { self.poller = try EpollPoller() }
        #else
            self.poller = poller ?? PollPoller()
        #endif
        var ends: [Int32] = [0, 0]
        #if os(Linux)
            // Close-on-exec from the start: a child another thread starts meanwhile does not inherit it.
            guard csyncnetwork_pipe_nonblocking_cloexec(&ends) == 0 else { throw .systemCall("pipe2", errno) }
        #else
            guard pipe(&ends) == 0 else { throw .systemCall("pipe", errno) }
        #endif
        wakeReader = ends[0]
        wakeWriter = ends[1]
        // Allocated once nothing can throw any more (a failed init runs no deinit).
        readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        for descriptor in ends { Socket.configure(descriptor, nonBlocking: true) }
        self.poller.add(wakeReader, readable: true, writable: false)
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.stackSize = 1 << 20
        thread.start()
    }

    deinit {
        // The thread holds the loop until it ends, so nothing reads into the buffer any more.
        readBuffer.deallocate()
    }

    /// Whether the caller runs on this loop's thread.
    var inLoop: Bool {
        guard let loopThread = threadID.withLock({ $0 }) else { return false }
        return pthread_equal(loopThread, pthread_self()) != 0
    }

    /// Runs `work` on the loop's thread, soon, after the tasks handed over before it. Tasks handed over
    /// after `stop()` are dropped.
    func execute(_ work: @escaping @Sendable () -> Void) {
        let wake = pending.withLock { pending -> Bool in
            guard !pending.stopping else { return false }
            pending.tasks.append(work)
            return pending.tasks.count == 1
        }
        if wake {
            var byte: UInt8 = 1
            _ = Socket.rawWrite(wakeWriter, &byte, 1)
        }
    }

    // MARK: On the loop's thread

    func register(_ descriptor: Int32, _ handler: any EventLoopHandler, readable: Bool, writable: Bool) {
        handlers[descriptor] = handler
        poller.add(descriptor, readable: readable, writable: writable)
    }

    func setInterest(_ descriptor: Int32, readable: Bool, writable: Bool) {
        guard handlers[descriptor] != nil else { return }
        poller.modify(descriptor, readable: readable, writable: writable)
    }

    /// Forgets `descriptor` (call before closing it).
    func unregister(_ descriptor: Int32) {
        guard handlers.removeValue(forKey: descriptor) != nil else { return }
        poller.remove(descriptor)
    }

    /// Runs `work` on the loop at or after `delay` from now; the returned id cancels it.
    @discardableResult
    func schedule(after delay: Duration, _ work: @escaping () -> Void) -> UInt64 {
        schedule(at: .now + delay, work)
    }

    /// Runs `work` on the loop at or after `deadline`; the returned id cancels it. Timers due together run
    /// in deadline order (those with equal deadlines in the order they were scheduled).
    @discardableResult
    func schedule(at deadline: ContinuousClock.Instant, _ work: @escaping () -> Void) -> UInt64 {
        timers.insert(deadline: deadline, work)
    }

    func cancelTimer(_ id: UInt64) {
        timers.cancel(id)
    }

    // MARK: Stopping

    /// Stops the loop after the tasks already handed over; returns once its thread has ended. Handlers
    /// still registered are dropped (their owners close their descriptors before stopping the loop).
    func stop() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = finished.withLock { waiters -> Bool in
                guard waiters != nil else { return true }
                waiters!.append(continuation)
                return false
            }
            if done {
                continuation.resume()
                return
            }
            pending.withLock { $0.stopping = true }
            var byte: UInt8 = 1
            _ = Socket.rawWrite(wakeWriter, &byte, 1)
        }
    }

    private func run() {
        threadID.withLock { $0 = pthread_self() }
        while true {
            let timeout = nextTimeout()
            for (descriptor, readiness) in poller.wait(timeoutMilliseconds: timeout) {
                if descriptor == wakeReader {
                    drainWakeups()
                } else {
                    handlers[descriptor]?.handle(readiness)
                }
            }
            runDueTimers()
            let (tasks, stopping) = pending.withLock { pending in
                defer { pending.tasks = [] }
                return (pending.tasks, pending.stopping)
            }
            for task in tasks { task() }
            if stopping { break }
        }
        handlers = [:]
        timers.removeAll()
        poller.remove(wakeReader)
        Socket.close(wakeReader)
        Socket.close(wakeWriter)
        let waiters = finished.withLock { waiters in
            defer { waiters = nil }
            return waiters ?? []
        }
        for waiter in waiters { waiter.resume() }
    }

    private func nextTimeout() -> Int32 {
        if pending.withLock({ !$0.tasks.isEmpty || $0.stopping }) { return 0 }
        guard let soonest = timers.earliest else { return -1 }
        let remaining = ContinuousClock.now.duration(to: soonest)
        if remaining <= .zero { return 0 }
        let (seconds, attoseconds) = remaining.components
        let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1
        return Int32(clamping: milliseconds)
    }

    private func runDueTimers() {
        let now = ContinuousClock.now
        // Those due now, in deadline order, each taken when it runs, so that one a timer cancels does not
        // run; timers they schedule run in a later round.
        let newest = timers.newestID
        while let work = timers.popDue(now: now, insertedThrough: newest) { work() }
    }

    private func drainWakeups() {
        var buffer = [UInt8](repeating: 0, count: 256)
        while Socket.rawRead(wakeReader, &buffer, buffer.count) > 0 {}
    }
}
