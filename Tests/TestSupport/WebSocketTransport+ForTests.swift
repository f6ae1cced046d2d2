import SyncNetwork

extension WebSocketLimits {
    /// Production's limits, but with an opening-handshake timeout for tests that are not about it: 60 s,
    /// scaled like every test deadline (`BuildFlavor.deadlineScale`). Production's 10 s is for a real
    /// network; on a loaded 2-core machine a test's loopback peer (a thread of its own, starved by the rest
    /// of the suite) can take longer to answer, and the handshake would fail for that alone (fresh-clone run
    /// S23-A: `ClientHandshakeTests`, at load average 14). A hang still fails, at this timeout or the test's
    /// own deadline. Tests of the timeout set `handshakeTimeout` themselves.
    public static var forTests: WebSocketLimits {
        var limits = WebSocketLimits()
        limits.handshakeTimeout = Duration.seconds(60).scaledForBuild
        return limits
    }
}

extension WebSocketTransport {
    /// A transport with `WebSocketLimits.forTests` (or `limits`), for tests that are not about its timeouts.
    public static func forTests(limits: WebSocketLimits = .forTests) -> WebSocketTransport {
        WebSocketTransport(limits: limits)
    }
}
