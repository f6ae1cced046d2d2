import SyncWire
import Testing

@Suite("SyncEndpoint(url:)")
struct SyncEndpointURLTests {
    static let accepted: [(String, String, Int)] = [
        ("ws://127.0.0.1:9000", "127.0.0.1", 9000),
        ("ws://localhost:1", "localhost", 1),
        ("ws://sync.example.com:65535", "sync.example.com", 65535),
        ("WS://Host-1:80", "Host-1", 80),
        ("ws://127.0.0.1:9000/", "127.0.0.1", 9000),
        ("ws://example.com", "example.com", 80),
        ("ws://[::1]:9000", "::1", 9000),
        ("ws://[2001:db8::7]", "2001:db8::7", 80),
        ("ws://[::ffff:127.0.0.1]:8080/", "::ffff:127.0.0.1", 8080),
    ]

    @Test(
        "ws://host:port, a default port of 80, IPv6 in brackets (kept without them), a final slash", arguments: accepted
    )
    func accepts(url: String, host: String, port: Int) throws {
        #expect(try SyncEndpoint(url: url) == .webSocket(host: host, port: port))
    }

    static let refused: [(String, SyncEndpointURLError)] = [
        ("127.0.0.1:9000", .missingScheme("127.0.0.1:9000")),
        ("http://host:80", .unsupportedScheme("http")),
        ("wss://host:443", .tlsRequiresSyncNIO("wss://host:443")),
        ("WSS://host/sync", .tlsRequiresSyncNIO("WSS://host/sync")),
        ("ws://:9000", .missingHost),
        ("ws://", .missingHost),
        ("ws://[]:9000", .invalidHost("[]")),
        ("ws://[nope]:9000", .invalidHost("[nope]")),
        ("ws://[::1:9000", .invalidHost("[::1:9000")),
        ("ws://[::1]9000", .invalidPort("9000")),
        ("ws://ho st:9000", .invalidHost("ho st")),
        ("ws://::1:9000", .unbracketedIPv6Address("::1:9000")),
        ("ws://host:", .invalidPort("")),
        ("ws://host:0", .invalidPort("0")),
        ("ws://host:65536", .invalidPort("65536")),
        ("ws://host:+80", .invalidPort("+80")),
        ("ws://host:80x", .invalidPort("80x")),
        ("ws://host:000080", .invalidPort("000080")),
        ("ws://user@host:80", .unexpectedUserInfo),
        ("ws://host:80/sync", .unexpectedPath("/sync")),
        ("ws://host:80//", .unexpectedPath("//")),
        ("ws://host:80?key=1", .unexpectedQuery("?key=1")),
        ("ws://host:80/?key=1", .unexpectedQuery("?key=1")),
        ("ws://host:80#top", .unexpectedFragment("#top")),
    ]

    @Test("anything else is refused with an error saying what is wrong", arguments: refused)
    func refuses(url: String, error: SyncEndpointURLError) {
        #expect(throws: error) { try SyncEndpoint(url: url) }
    }

    @Test("the errors read clearly: what was wrong and what is expected")
    func descriptions() {
        let tls = SyncEndpointURLError.tlsRequiresSyncNIO("wss://host:443").description
        #expect(tls.contains("TLS") && tls.contains("SyncNIO") && tls.contains("wss://host:443"), "\(tls)")
        #expect(SyncEndpointURLError.unsupportedScheme("http").description.contains("expected ws://host:port"))
        #expect(SyncEndpointURLError.unbracketedIPv6Address("::1:9000").description.contains("ws://[::1:9000]"))
        #expect(SyncEndpointURLError.invalidPort("0").description.contains("1 to 65535"))
        #expect(SyncEndpointURLError.unexpectedPath("/x").description.contains("/x"))
    }

    @Test("url and description write ws://host:port, IPv6 in brackets, and read back to the same endpoint")
    func roundTrip() throws {
        for endpoint in [SyncEndpoint.webSocket(host: "::1", port: 9000), .webSocket(host: "example.com", port: 80)] {
            let url = try #require(endpoint.url)
            #expect(endpoint.description == url)
            #expect(try SyncEndpoint(url: url) == endpoint)
        }
        #expect(SyncEndpoint.webSocket(host: "::1", port: 9000).url == "ws://[::1]:9000")
    }
}
