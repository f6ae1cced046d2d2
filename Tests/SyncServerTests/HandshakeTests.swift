import SyncServer
import SyncWire
import TestSupport
import Testing

@Suite("Handshake", .timeLimit(.minutes(5)))
struct HandshakeTests {
    @Test func helloIsWelcomed() async throws {
        let server = try await SyncServer.embedded()
        let client = try await TestClient(server)
        client.send(.hello(Hello(credential: .anonymous)))
        #expect(
            try await client.next()
                == .welcome(
                    protocolVersion: WireProtocol.version, maximumMessageBytes: UInt32(WireProtocol.maximumMessageSize))
        )
        #expect(server.connectionCount == 1)
    }

    @Test func wrongProtocolVersionIsRefusedAndClosed() async throws {
        let server = try await SyncServer.embedded()
        let client = try await TestClient(server)
        client.send(.hello(Hello(protocolVersion: WireProtocol.version + 1, credential: .anonymous)))
        let error = try await client.nextError()
        #expect(error.code == .unsupportedProtocolVersion)
        #expect(error.sessionID == nil)
        try await client.expectClosed(.connectionLost("the server closed the connection"))
        try await waitUntil("the connection to be forgotten") { server.connectionCount == 0 }
    }

    @Test func anonymousIsRefusedWhenAPIKeysAreRequired() async throws {
        let server = try await SyncServer.embedded(configuration: .init(authentication: .apiKeys(["k": ["p"]])))
        let client = try await TestClient(server)
        client.send(.hello(Hello(credential: .anonymous)))
        let error = try await client.nextError()
        #expect(error.code == .authenticationFailed)
        #expect(error.sessionID == nil)
        try await client.expectClosed(.connectionLost("the server closed the connection"))
    }

    @Test func unknownAPIKeyIsRefused() async throws {
        let server = try await SyncServer.embedded(configuration: .init(authentication: .apiKeys(["k": ["p"]])))
        let client = try await TestClient(server)
        client.send(.hello(Hello(credential: .apiKey("other"))))
        #expect(try await client.nextError().code == .authenticationFailed)
        try await client.expectClosed(.connectionLost("the server closed the connection"))
    }

    @Test func knownAPIKeyIsWelcomed() async throws {
        let server = try await SyncServer.embedded(configuration: .init(authentication: .apiKeys(["k": ["p"]])))
        _ = try await TestClient.welcomed(to: server, credential: .apiKey("k"))
    }

    @Test func anonymousAllowedAcceptsAnyAPIKey() async throws {
        let server = try await SyncServer.embedded()
        let client = try await TestClient.welcomed(to: server, credential: .apiKey("anything"))
        #expect(try await client.bind(clientFileID: 1).count == 1)
    }

    @Test(arguments: [
        ClientMessage.bind(Bind(sessionID: 1, partition: "p", clientFileID: 1, downloadedVersion: 0)),
        .upload(Upload(sessionID: 1, changesets: [])),
        .unbind(sessionID: 1),
        .ping(id: 1),
    ])
    func anyMessageBeforeHelloIsMalformed(message: ClientMessage) async throws {
        let server = try await SyncServer.embedded()
        let client = try await TestClient(server)
        client.send(message)
        client.send(.hello(Hello(credential: .anonymous)))
        let error = try await client.nextError()
        #expect(error.code == .malformedMessage)
        #expect(error.sessionID == nil)
        try await client.expectClosed(.connectionLost("the server closed the connection"))
    }

    @Test func secondHelloIsMalformed() async throws {
        let server = try await SyncServer.embedded()
        let client = try await TestClient.welcomed(to: server)
        client.send(.hello(Hello(credential: .anonymous)))
        #expect(try await client.nextError().code == .malformedMessage)
        try await client.expectClosed(.connectionLost("the server closed the connection"))
    }

    @Test func pingIsAnsweredWithTheSameID() async throws {
        let server = try await SyncServer.embedded()
        let client = try await TestClient.welcomed(to: server)
        client.send(.ping(id: 42))
        client.send(.ping(id: 7))
        #expect(try await client.next() == .pong(id: 42))
        #expect(try await client.next() == .pong(id: 7))
    }
}
