/// A condition a test waited for did not come true before its deadline.
public struct WaitTimedOut: Error, CustomStringConvertible {
    public let what: String
    public let limit: Duration

    public init(what: String, limit: Duration) {
        self.what = what
        self.limit = limit
    }

    public var description: String { "timed out after \(limit) waiting for \(what)" }
}

/// The default deadline of a wait, before scaling: 20 s, so that even scaled under ThreadSanitizer (60 s)
/// it stays clearly inside the shortest suite time limit (2 minutes), and a regression reports "timed out
/// waiting for X" rather than a bare time limit.
public let defaultWaitSeconds: Double = 20

/// The one deadline wait of the suite: polls `condition` until it holds, off nothing (it sleeps between
/// polls, so it never holds a thread of the cooperative pool), and throws `WaitTimedOut` naming `what`
/// once `seconds` (multiplied by `BuildFlavor.deadlineScale` under a sanitizer) have passed and one last
/// check after the deadline still fails. A deadline here is a generous bound for work other threads do,
/// never a measurement: nothing asserts how long the wait took.
public func waitUntil(
    _ what: String,
    seconds: Double = defaultWaitSeconds,
    _ condition: () async throws -> Bool
) async throws {
    let limit = Duration.milliseconds(Int(seconds * BuildFlavor.deadlineScale * 1000))
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(2))
    }
    // Once more after the deadline: the condition may have come true while this task waited to run.
    if try await condition() { return }
    throw WaitTimedOut(what: what, limit: limit)
}

/// `waitUntil` with its deadline as a `Duration` (scaled the same way).
public func waitUntil(
    _ what: String,
    limit: Duration,
    _ condition: () async throws -> Bool
) async throws {
    try await waitUntil(what, seconds: limit.inSeconds, condition)
}

/// The same wait under the name most engine and network tests use.
public func eventually(
    _ what: String,
    seconds: Double = defaultWaitSeconds,
    _ condition: () async throws -> Bool
) async throws {
    try await waitUntil(what, seconds: seconds, condition)
}

/// The same wait under the name most engine and network tests use, its deadline a `Duration`.
public func eventually(
    _ what: String,
    limit: Duration,
    _ condition: () async throws -> Bool
) async throws {
    try await waitUntil(what, seconds: limit.inSeconds, condition)
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    fileprivate var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
