import Dispatch
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import SyncStreams

/// An object whose lifetime a test watches through a weak reference: capture it in a closure, drop the
/// strong local, and check the weak reference after the subscription should have released the closure.
final class LifetimeCanary: Sendable {
    init() {}

    /// Gives a closure a use of the canary, so that it captures it.
    func touch() {}
}

/// A failure for streams under test.
enum StreamTestError: Error, Equatable, Sendable {
    case boom
    case other
}

/// An integer counter that any thread may change.
final class AtomicCounter: Sendable {
    private let storage: Atomic<Int>

    init(_ value: Int = 0) { storage = Atomic(value) }

    var value: Int { storage.load(ordering: .sequentiallyConsistent) }

    /// Adds one; returns the new value.
    @discardableResult
    func increment() -> Int { storage.add(1, ordering: .sequentiallyConsistent).newValue }

    /// Subtracts one; returns the new value.
    @discardableResult
    func decrement() -> Int { storage.subtract(1, ordering: .sequentiallyConsistent).newValue }
}

/// A flag that any thread may set once and read.
final class AtomicFlag: Sendable {
    private let storage = Atomic<Bool>(false)

    init() {}

    var isSet: Bool { storage.load(ordering: .sequentiallyConsistent) }

    func set() { storage.store(true, ordering: .sequentiallyConsistent) }
}

/// Detects overlapping callbacks: wrap each callback's body in `enter()` / `exit()`.
final class OverlapDetector: Sendable {
    private let inside = AtomicCounter()
    private let overlaps = AtomicCounter()

    init() {}

    /// How many times a callback started while another one was running.
    var overlapCount: Int { overlaps.value }

    func enter() { if inside.increment() != 1 { overlaps.increment() } }

    func exit() { inside.decrement() }
}

/// Holds a subscription's token so that the subscription's own callbacks (or another thread) can reach it.
final class TokenSlot: Sendable {
    private let storage = Locked<SubscriptionToken?>(nil)

    init() {}

    var token: SubscriptionToken? {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }

    /// Invalidates the stored token (outside the lock) and keeps holding it.
    func invalidate() { token?.invalidate() }
}

/// A value guarded by a lock, for state shared between a test and callbacks.
final class LockedBox<Value: Sendable>: Sendable {
    private let storage: Locked<Value>

    init(_ value: Value) { storage = Locked(value) }

    var value: Value {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }

    func mutate<R>(_ body: (inout Value) -> R) -> R { storage.withLock(body) }
}

/// Counts the live subscriptions of a stream wrapped with `tracked(by:)`.
final class SubscriptionTracker: Sendable {
    /// Subscriptions subscribed and not yet invalidated.
    let active = AtomicCounter()
    /// Every subscription ever made.
    let total = AtomicCounter()

    init() {}
}

extension SyncStream {
    /// This stream, counting its live subscriptions in `tracker`: a subscription counts until its token is
    /// invalidated (or released). Lets a test check that an operator ended its upstream subscription.
    func tracked(by tracker: SubscriptionTracker) -> AnySyncStream<Output, Failure> {
        AnySyncStream { onValue, onCompletion in
            tracker.active.increment()
            tracker.total.increment()
            let inner = self.subscribe(onValue: onValue, onCompletion: onCompletion)
            return SubscriptionToken {
                tracker.active.decrement()
                inner.invalidate()
            }
        }
    }
}

/// How long a test waits for other threads before failing: 20 s, scaled under a sanitizer (60 s under
/// ThreadSanitizer), so that it stays inside a two-minute suite time limit and a regression reports what
/// it waited for.
let threadDeadline: TimeInterval = defaultWaitSeconds * BuildFlavor.deadlineScale

/// Runs `body(index)` on `count` new threads and waits for all of them; returns false if they did not all
/// finish within `threadDeadline`.
func runOnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) -> Bool {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            body(index)
            group.leave()
        }
        thread.start()
    }
    return group.wait(timeout: .now() + threadDeadline) == .success
}

/// Starts `body` on a new thread; the returned semaphore is signalled when it has finished.
func startThread(_ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        body()
        done.signal()
    }
    thread.start()
    return done
}

extension DispatchSemaphore {
    /// Waits for a signal for at most `threadDeadline`; returns whether it came.
    func waitWithDeadline() -> Bool { wait(timeout: .now() + threadDeadline) == .success }
}

/// Subscribes with `subscribe`, whose closures capture the canary it is given, then checks that the
/// subscription keeps the canary alive and that `invalidate()` releases it.
func expectInvalidationReleasesCaptures(
    sourceLocation: SourceLocation = #_sourceLocation,
    _ subscribe: (LifetimeCanary) -> SubscriptionToken
) {
    let probe = LifetimeProbe()
    var token: SubscriptionToken? = probe.capture { canary in
        subscribe(canary)
    }
    #expect(probe.isAlive, "the subscription keeps what it captured", sourceLocation: sourceLocation)
    token?.invalidate()
    #expect(!probe.isAlive, "invalidate() releases what the subscription captured", sourceLocation: sourceLocation)
    token = nil
}

/// Watches the lifetime of a `LifetimeCanary` handed to a subscription: `capture` creates the canary,
/// lets the subscription capture it (its only strong reference), and keeps just a weak reference.
final class LifetimeProbe {
    private weak var canary: LifetimeCanary?

    /// Whether something still holds the canary.
    var isAlive: Bool { canary != nil }

    func capture(_ subscribe: (LifetimeCanary) -> SubscriptionToken) -> SubscriptionToken {
        let canary = LifetimeCanary()
        self.canary = canary
        return subscribe(canary)
    }
}

/// Waits until `condition` holds, polling, for at most `threadDeadline`; returns whether it held. For
/// deliveries that a long drain handed on to a global queue: they happen after the senders returned.
func eventually(_ condition: () -> Bool) -> Bool {
    let deadline = Date(timeIntervalSinceNow: threadDeadline)
    while Date() < deadline {
        if condition() { return true }
        Thread.sleep(forTimeInterval: 0.001)
    }
    return condition()  // once more after the deadline
}
