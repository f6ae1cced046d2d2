import Testing

@testable import SyncServerCommandLine

@Suite struct ServerURLTests {
    @Test("a server's URL brackets an IPv6 host and only an IPv6 host")
    func ipv6InBrackets() {
        #expect(serverURL(scheme: "ws", host: "127.0.0.1", port: 8080) == "ws://127.0.0.1:8080")
        #expect(serverURL(scheme: "http", host: "::1", port: 9090) == "http://[::1]:9090")
        #expect(serverURL(scheme: "ws", host: "example.org", port: 1) == "ws://example.org:1")
    }
}
