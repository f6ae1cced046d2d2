/// A condition a test waited for did not come true before the deadline.
struct WaitTimedOut: Error, CustomStringConvertible {
    let what: String
    var description: String { "timed out waiting for \(what)" }
}

/// Polls `condition` until it is true, or throws `WaitTimedOut` after `seconds` (a generous deadline,
/// not a measurement).
func waitUntil(
    _ what: String,
    seconds: Double = 60,
    _ condition: () async throws -> Bool
) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now + .milliseconds(Int(seconds * 1000))
    while try await !condition() {
        guard clock.now < deadline else { throw WaitTimedOut(what: what) }
        await Task.yield()
        try await Task.sleep(for: .milliseconds(1))
    }
}
