import Synchronization

#if DEBUG
    /// A test hook: how many times a thread revoking a `ParkingLock`'s bias found the owner inside its
    /// biased section and began to wait for it — so a test can check the revoker is held at that point, not
    /// merely that some time passed. Touched only on that (rare) path, and compiled only into debug builds
    /// (the tests'): release builds have no trace of it.
    @usableFromInline
    enum BiasRevocationObserver {
        static let ownerInsideCount = Atomic<Int>(0)

        @usableFromInline
        static func sawOwnerInside() { ownerInsideCount.add(1, ordering: .relaxed) }
    }
#endif
