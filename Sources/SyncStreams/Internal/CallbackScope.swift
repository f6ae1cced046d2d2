import CSyncStreams

/// The calling thread's involvement in stream deliveries: how many relay drains it is inside of, and a
/// cheap identity for it.
///
/// A drain (the loop that calls subscribers) enters a scope for its whole duration, and so does every
/// other path that calls a subscriber (`Just`, `Empty`, `Fail`, `prepend`, the empty `combineLatest`,
/// `merge` and `zip`, `prefix(0)`, a closure-based `AnySyncStream`: `delivering(_:)`), so code running in
/// any stream callback sees `isInsideCallback == true`. `SubscriptionToken.invalidate()` uses it: from
/// inside a callback it never waits for a callback running on another thread (two callbacks
/// invalidating each other's subscriptions from two threads would otherwise wait for each other).
///
/// Both are one thread-local access (the C shim's `initial-exec` thread-local), cheap enough for a
/// drain per value.
@usableFromInline
enum CallbackScope {
    /// Whether the calling thread is inside a stream callback (a relay's drain).
    @inlinable @inline(__always)
    static var isInsideCallback: Bool { csyncstreams_callback_depth_get() != 0 }

    /// Marks the start of a drain on the calling thread.
    @inlinable @inline(__always)
    static func enter() { csyncstreams_callback_depth_enter() }

    /// Marks the end of a drain on the calling thread.
    @inlinable @inline(__always)
    static func leave() { csyncstreams_callback_depth_leave() }

    /// Runs `body`, which calls a subscriber outside any relay (a synchronous source such as `Just`, or a
    /// custom `AnySyncStream`), inside a scope: every path that calls a subscriber counts as a callback.
    @inlinable @inline(__always)
    static func delivering(_ body: () -> Void) {
        enter()
        body()
        leave()
    }
}

/// The identity of the calling thread: the address of its callback-depth thread-local, unique among
/// running threads and read without a call into the C library.
@usableFromInline
struct ThreadID: Equatable, Sendable {
    @usableFromInline let raw: UInt

    @inlinable
    init(raw: UInt) { self.raw = raw }

    @inlinable
    static var current: ThreadID { ThreadID(raw: csyncstreams_current_thread()) }
}
