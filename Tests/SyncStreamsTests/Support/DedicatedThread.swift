import Dispatch
import Foundation

/// Runs `body` on a thread of its own (never on Swift's cooperative pool, which blocking waits would
/// starve) and returns its result. `body` must bound every wait it makes with a deadline.
func onDedicatedThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: body()) }
        thread.start()
    }
}

/// A stream callback that blocks until released (at most `threadDeadline`), recording that it entered
/// and that it returned.
final class BlockingCallback: Sendable {
    let entered = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let returned = AtomicFlag()

    func run() {
        entered.signal()
        _ = release.waitWithDeadline()
        returned.set()
    }
}

/// The outcome of a call that may deadlock, run on a thread of its own: whether it returned within
/// `seconds`. A call that never returns leaves its thread blocked (a failed test, not a hung one).
func returnsWithin(seconds: Double, _ call: @escaping @Sendable () -> Void) -> Bool {
    let done = startThread(call)
    return done.wait(timeout: .now() + seconds) == .success
}

/// Keeps `object` alive for the rest of the process: a test that found a deadlock must not release (and
/// so invalidate) a token whose relay's lock a stuck thread holds.
func keepAliveAfterDeadlock(_ object: AnyObject & Sendable) {
    deadlockedObjects.mutate { $0.append(object) }
}

private let deadlockedObjects = LockedBox<[AnyObject & Sendable]>([])
