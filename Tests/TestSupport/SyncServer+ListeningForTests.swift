import SyncNetwork
import SyncServer

extension SyncServer {
    /// `listening(host:port:configuration:limits:)` for tests that are not about the `hello` deadline: when
    /// `limits` names none, the deadline is production's 10 s scaled like every test deadline
    /// (`BuildFlavor.deadlineScale`: 60 s under ThreadSanitizer). Under a sanitizer on a loaded 2-core
    /// machine a test client can take more than 10 s to say hello, and the server would close it with 1008
    /// (a second TSan run of stop 22: `LimitsTests.maximumConnections`, `NetworkSyncTests.keys`). Tests of
    /// the deadline pass their own `limits.helloTimeout`.
    public static func listeningForTests(
        host: String = "127.0.0.1", port: Int = 0, configuration: Configuration = .init(),
        limits: WebSocketLimits? = nil
    ) async throws -> SyncServer {
        var limits = limits ?? WebSocketLimits()
        if limits.helloTimeout == nil { limits.helloTimeout = Duration.seconds(10).scaledForBuild }
        return try await listening(host: host, port: port, configuration: configuration, limits: limits)
    }
}
