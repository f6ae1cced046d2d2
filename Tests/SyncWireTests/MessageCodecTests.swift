import Testing

@testable import SyncWire

@Suite struct MessageCodecTests {
    // MARK: - Round trips

    @Test(arguments: Samples.client)
    func clientMessageRoundTrips(message: ClientMessage) throws {
        let bytes = message.encoded()
        #expect(bytes.count == message.encodedSize)
        #expect(try ClientMessage(decoding: bytes) == message)
    }

    @Test(arguments: Samples.server)
    func serverMessageRoundTrips(message: ServerMessage) throws {
        let bytes = message.encoded()
        #expect(bytes.count == message.encodedSize)
        #expect(try ServerMessage(decoding: bytes) == message)
    }

    @Test func everyMessageTypeByteIsDistinct() {
        let types = Samples.client.map { $0.encoded()[0] } + Samples.server.map { $0.encoded()[0] }
        #expect(
            Set(types) == [
                0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87,
            ])
    }

    // MARK: - Golden bytes (these pin the format; docs/Protocol.md describes the same layout)

    @Test func clientGoldenBytes() throws {
        let golden: [(ClientMessage, [UInt8])] = [
            (.hello(Hello(protocolVersion: 1, credential: .anonymous)), [0x01, 0x01, 0x00, 0x00]),
            (
                .hello(Hello(protocolVersion: 0x0102, credential: .apiKey("k"))),
                [0x01, 0x02, 0x01, 0x01, 0x01, 0x00, 0x00, 0x00, 0x6B]
            ),
            (
                .bind(
                    Bind(
                        sessionID: 2, partition: "p", clientFileID: 3, downloadedVersion: 0x0405, historyID: 0x0607,
                        acknowledgedClientVersion: 8)),
                [
                    0x02, 0x02, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x70,
                    0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                    0x05, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                    0x07, 0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                    0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                ]
            ),
            (
                .upload(Upload(sessionID: 1, changesets: [UploadChangeset(clientVersion: 7, data: [0xAA, 0xBB])])),
                [
                    0x03, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
                    0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0xAA, 0xBB,
                ]
            ),
            (.upload(Upload(sessionID: 1, changesets: [])), [0x03, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]),
            (.unbind(sessionID: 0x0A0B_0C0D), [0x04, 0x0D, 0x0C, 0x0B, 0x0A]),
            (.ping(id: 0x0102_0304_0506_0708), [0x05, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01]),
            (
                .mark(sessionID: 2, id: 0x0102),
                [0x06, 0x02, 0x00, 0x00, 0x00, 0x02, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]
            ),
        ]
        for (message, bytes) in golden {
            #expect(message.encoded() == bytes, "\(message)")
            #expect(try ClientMessage(decoding: bytes) == message)
        }
    }

    @Test(
        "a version 6 bind that names a checkpoint (a version and the CRC-32 of the changeset the client holds there) is type 0x07, the bind's fields, then the checkpoint; one that names none is the version 5 bind (0x02)"
    )
    func bindCheckpoint() throws {
        let plain = Bind(
            sessionID: 2, partition: "p", clientFileID: 3, downloadedVersion: 0x0405, historyID: 0x0607,
            acknowledgedClientVersion: 8)
        var named = plain
        named.checkpoint = LogCheckpoint(serverVersion: 0x0405, digest: 0xA1B2_C3D4)
        let plainBytes = ClientMessage.bind(plain).encoded()
        #expect(plainBytes.count == 42)
        #expect(plainBytes.first == 0x02)
        let namedBytes = ClientMessage.bind(named).encoded()
        #expect(
            namedBytes
                == [0x07] + plainBytes.dropFirst() + [
                    0x05, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xD4, 0xC3, 0xB2, 0xA1,
                ]
        )
        #expect(ClientMessage.bind(named).encodedSize == 54)
        #expect(try ClientMessage(decoding: namedBytes) == .bind(named))
        #expect(try ClientMessage(decoding: plainBytes) == .bind(plain))
        // The checkpoint is not optional in a 0x07 bind, nor allowed in a 0x02 one.
        #expect(throws: WireError.truncated(needed: 8, available: 0)) {
            try ClientMessage(decoding: [0x07] + plainBytes.dropFirst())
        }
        #expect(throws: WireError.trailingBytes(12)) { try ClientMessage(decoding: [0x02] + namedBytes.dropFirst()) }
    }

    @Test(
        "a version 8 bind whose checkpoint covers the prefix of the log is type 0x09 with the same fields as 0x07 and decodes as a prefix checkpoint; a one-changeset checkpoint stays 0x07"
    )
    func bindPrefixCheckpoint() throws {
        var bind = Bind(
            sessionID: 2, partition: "p", clientFileID: 3, downloadedVersion: 0x0405, historyID: 0x0607,
            acknowledgedClientVersion: 8)
        bind.checkpoint = LogCheckpoint(serverVersion: 0x0405, digest: 0xA1B2_C3D4)
        let one = ClientMessage.bind(bind).encoded()
        bind.checkpoint?.coversPrefix = true
        let prefix = ClientMessage.bind(bind).encoded()
        #expect(prefix == [0x09] + one.dropFirst())
        #expect(ClientMessage.bind(bind).encodedSize == 54)
        #expect(try ClientMessage(decoding: prefix) == .bind(bind))
        #expect(try ClientMessage(decoding: one) != .bind(bind))
    }

    @Test("an upload naming origins (protocol version 7) round-trips as type 0x08; one without keeps type 0x03")
    func uploadOrigins() throws {
        let plain = Upload(
            sessionID: 2,
            changesets: [
                UploadChangeset(clientVersion: 1, data: [0xAA]), UploadChangeset(clientVersion: 2, data: [0xBB, 0xCC]),
            ])
        var named = plain
        named.changesets[1].origin = ChangesetOrigin(clientFileID: 0x0304, clientVersion: 5)
        let plainBytes = ClientMessage.upload(plain).encoded()
        // The version 6 form, unchanged: type, session, count, then each version and length-prefixed bytes.
        let header: [UInt8] = [0x03, 2, 0, 0, 0, 2, 0, 0, 0]
        let first: [UInt8] = [1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0xAA]
        let second: [UInt8] = [2, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0xBB, 0xCC]
        #expect(plainBytes == header + first + second)
        // Version 7: type 0x08, then the count of origins and each one's index, client file and version.
        let origins: [UInt8] = [1, 0, 0, 0, 1, 0, 0, 0, 0x04, 0x03, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0]
        let namedBytes = ClientMessage.upload(named).encoded()
        #expect(namedBytes == [0x08] + Array(plainBytes.dropFirst()) + origins)
        #expect(ClientMessage.upload(named).encodedSize == namedBytes.count)
        #expect(ClientMessage.upload(plain).encodedSize == plainBytes.count)
        #expect(try ClientMessage(decoding: namedBytes) == .upload(named))
        // An old client's upload decodes with no origins.
        #expect(try ClientMessage(decoding: plainBytes) == .upload(plain))
        // Every changeset named, in order.
        var all = named
        all.changesets[0].origin = ChangesetOrigin(clientFileID: 7, clientVersion: 1)
        #expect(try ClientMessage(decoding: ClientMessage.upload(all).encoded()) == .upload(all))
        // A 0x08 upload names at least one origin, in increasing index, within the changesets.
        let body = Array(plainBytes.dropFirst())
        let none: [UInt8] = [0x08] + body + [0, 0, 0, 0]
        #expect(throws: WireError.self) { try ClientMessage(decoding: none) }
        let pastTheEnd: [UInt8] = [0x08] + body + [1, 0, 0, 0, 2, 0, 0, 0] + [UInt8](repeating: 0, count: 16)
        #expect(throws: WireError.self) { try ClientMessage(decoding: pastTheEnd) }
        let one: [UInt8] = [1, 0, 0, 0] + [UInt8](repeating: 1, count: 16)
        let twice: [UInt8] = [0x08] + body + [2, 0, 0, 0] + one + one
        #expect(throws: WireError.self) { try ClientMessage(decoding: twice) }
        let namedAsPlain: [UInt8] = [0x03] + Array(namedBytes.dropFirst())
        #expect(throws: WireError.self) { try ClientMessage(decoding: namedAsPlain) }
    }

    @Test func serverGoldenBytes() throws {
        let golden: [(ServerMessage, [UInt8])] = [
            (.welcome(protocolVersion: 1), [0x81, 0x01, 0x00]),
            // Version 5: the server's message limit follows the version.
            (
                .welcome(protocolVersion: 5, maximumMessageBytes: 0x0001_0000),
                [0x81, 0x05, 0x00, 0x00, 0x00, 0x01, 0x00]
            ),
            (
                .download(
                    Download(
                        sessionID: 1,
                        entries: [
                            .changeset(serverVersion: 5, data: [0xCC]),
                            .acknowledged(serverVersion: 6, clientVersion: 2),
                        ],
                        remainingBytes: 0x10, acknowledgedDigests: [0xA1B2_C3D4])),
                [
                    0x82, 0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
                    0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0xCC,
                    0x01, 0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                    0x00,
                    0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                    0x00,
                    0x01, 0x00, 0x00, 0x00, 0xD4, 0xC3, 0xB2, 0xA1,
                ]
            ),
            (
                .download(Download(sessionID: 2, entries: [], remainingBytes: 0, historyID: 0x0102)),
                [
                    0x82, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                    0x01, 0x02, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                    0x00, 0x00, 0x00, 0x00,
                ]
            ),
            (.unbound(sessionID: 3), [0x83, 0x03, 0x00, 0x00, 0x00]),
            (.pong(id: 1), [0x84, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]),
            (
                .marked(sessionID: 2, id: 0x0102),
                [0x86, 0x02, 0x00, 0x00, 0x00, 0x02, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]
            ),
            (
                .error(
                    ProtocolError(sessionID: 7, code: .serverBusy, message: "x", retryAfterMilliseconds: 1000)),
                [
                    0x85, 0x01, 0x07, 0x00, 0x00, 0x00, 0x09, 0x00, 0x01, 0x00, 0x00, 0x00, 0x78, 0x01, 0xE8, 0x03,
                    0x00, 0x00, 0x00,
                ]
            ),
            (
                .error(ProtocolError(code: .malformedMessage, message: "")),
                [0x85, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]
            ),
            (
                .error(
                    ProtocolError(
                        sessionID: 1, code: .clientResetRequired, message: "",
                        clientReset: ClientResetDetails(
                            reason: .clientExpired, serverVersion: 0x0908, lastIntegratedClientVersion: 3))),
                [
                    0x85, 0x01, 0x01, 0x00, 0x00, 0x00, 0x0B, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                    0x01, 0x01, 0x08, 0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00,
                    0x00, 0x00,
                ]
            ),
        ]
        for (message, bytes) in golden {
            #expect(message.encoded() == bytes, "\(message)")
            #expect(try ServerMessage(decoding: bytes) == message)
        }
    }

    // MARK: - Hostile input

    @Test func everyTruncationOfEverySampleFails() {
        for message in Samples.client {
            let bytes = message.encoded()
            for length in 0..<bytes.count {
                #expect(throws: WireError.self, "\(message) cut to \(length)") {
                    try ClientMessage(decoding: Array(bytes[..<length]))
                }
            }
        }
        for message in Samples.server {
            let bytes = message.encoded()
            for length in 0..<bytes.count {
                #expect(throws: WireError.self, "\(message) cut to \(length)") {
                    try ServerMessage(decoding: Array(bytes[..<length]))
                }
            }
        }
    }

    @Test func truncationReportsWhatWasMissing() {
        #expect(throws: WireError.truncated(needed: 1, available: 0)) { try ClientMessage(decoding: []) }
        #expect(throws: WireError.truncated(needed: 8, available: 3)) {
            try ClientMessage(decoding: [0x05, 1, 2, 3])
        }
        #expect(throws: WireError.truncated(needed: 4, available: 1)) { try ServerMessage(decoding: [0x83, 1]) }
    }

    @Test func hugeDeclaredCountsAndLengthsFailWithoutAllocating() {
        // Upload claiming 2^32-1 changesets with none present.
        #expect(throws: WireError.truncated(needed: 0xFFFF_FFFF * 12, available: 0)) {
            try ClientMessage(decoding: [0x03, 0x01, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF])
        }
        // Download claiming 2^32-1 entries.
        #expect(throws: WireError.truncated(needed: 0xFFFF_FFFF * 13, available: 8)) {
            try ServerMessage(
                decoding: [0x82, 0x01, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF] + Array(repeating: 0, count: 8))
        }
        // One changeset claiming 4 GiB of data.
        #expect(throws: WireError.truncated(needed: 0xFFFF_FFFF, available: 0)) {
            try ClientMessage(
                decoding: [0x03, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00]
                    + [0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00] + [0xFF, 0xFF, 0xFF, 0xFF])
        }
        // A partition name claiming 4 GiB.
        #expect(throws: WireError.truncated(needed: 0xFFFF_FFFF, available: 1)) {
            try ClientMessage(decoding: [0x02, 0x01, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0x61])
        }
        // An error message claiming 4 GiB.
        #expect(throws: WireError.truncated(needed: 0xFFFF_FFFF, available: 0)) {
            try ServerMessage(decoding: [0x85, 0x00, 0x01, 0x00, 0xFF, 0xFF, 0xFF, 0xFF])
        }
    }

    @Test func unknownMessageTypesAreRejected() {
        for type in UInt8.min...UInt8.max where !(0x01...0x09).contains(type) {
            #expect(throws: WireError.unknownMessageType(type)) { try ClientMessage(decoding: [type]) }
        }
        for type in UInt8.min...UInt8.max where !(0x81...0x87).contains(type) {
            #expect(throws: WireError.unknownMessageType(type)) { try ServerMessage(decoding: [type]) }
        }
    }

    @Test func messagesSentTheWrongWayAreRejected() {
        #expect(throws: WireError.unknownMessageType(0x84)) {
            try ClientMessage(decoding: ServerMessage.pong(id: 1).encoded())
        }
        #expect(throws: WireError.unknownMessageType(0x05)) {
            try ServerMessage(decoding: ClientMessage.ping(id: 1).encoded())
        }
    }

    @Test func unknownTagsAreRejected() {
        #expect(throws: WireError.unknownTag("WireCredential", 2)) {
            try ClientMessage(decoding: [0x01, 0x01, 0x00, 0x02])
        }
        #expect(throws: WireError.unknownTag("DownloadEntry", 7)) {
            try ServerMessage(
                decoding: [0x82, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x07] + Array(repeating: 0, count: 20))
        }
    }

    @Test func invalidValuesAreRejected() {
        // Unknown error code 0x00FF.
        #expect(throws: WireError.invalidValue("unknown ProtocolErrorCode 255")) {
            try ServerMessage(decoding: [0x85, 0x00, 0xFF, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00])
        }
        #expect(throws: WireError.invalidValue("unknown ProtocolErrorCode 0")) {
            try ServerMessage(decoding: [0x85, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00])
        }
        // Presence flags other than 0 and 1.
        #expect(throws: WireError.invalidValue("presence flag 2 (must be 0 or 1)")) {
            try ServerMessage(decoding: [0x85, 0x02, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00])
        }
        #expect(throws: WireError.invalidValue("presence flag 255 (must be 0 or 1)")) {
            try ServerMessage(decoding: [0x85, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0xFF])
        }
        // The client-reset details: their presence flag, and an unknown reason.
        #expect(throws: WireError.invalidValue("presence flag 2 (must be 0 or 1)")) {
            try ServerMessage(decoding: [0x85, 0x00, 0x0B, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02])
        }
        #expect(throws: WireError.invalidValue("unknown ClientResetReason 3")) {
            try ServerMessage(
                decoding: [0x85, 0x00, 0x0B, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x03]
                    + Array(repeating: 0, count: 16))
        }
        // Acknowledgement digests: none, or one per acknowledgement; one digest for no acknowledgement is not.
        #expect(throws: WireError.invalidValue("1 acknowledgement digests for 0 acknowledgements")) {
            try ServerMessage(
                decoding: [0x82, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00] + Array(repeating: 0, count: 8)
                    + [0x00, 0x01, 0x00, 0x00, 0x00, 0xAA, 0xBB, 0xCC, 0xDD])
        }
    }

    @Test func invalidUTF8InMessagesIsRejected() {
        #expect(throws: WireError.invalidUTF8) {
            try ClientMessage(decoding: [0x01, 0x01, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0xC3, 0x28])
        }
        #expect(throws: WireError.invalidUTF8) {
            try ClientMessage(
                decoding: [0x02, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0xFF] + Array(repeating: 0, count: 16))
        }
        #expect(throws: WireError.invalidUTF8) {
            try ServerMessage(decoding: [0x85, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0x80, 0x00])
        }
    }

    @Test func trailingBytesAreRejected() {
        for message in Samples.client {
            #expect(throws: WireError.trailingBytes(1)) { try ClientMessage(decoding: message.encoded() + [0]) }
        }
        for message in Samples.server {
            #expect(throws: WireError.trailingBytes(3)) { try ServerMessage(decoding: message.encoded() + [1, 2, 3]) }
        }
    }

    @Test(
        "a download's duplicate acknowledgements (version 9) round-trip, and only acknowledgements it holds, in order, are accepted"
    )
    func downloadDuplicateAcknowledgements() throws {
        let entries: [DownloadEntry] = [
            .acknowledged(serverVersion: 2, clientVersion: 1), .changeset(serverVersion: 3, data: [7]),
            .acknowledged(serverVersion: 4, clientVersion: 2),
        ]
        let plain = Download(sessionID: 1, entries: entries, remainingBytes: 0, acknowledgedDigests: [5, 6])
        let plainBytes = ServerMessage.download(plain).encoded()
        var named = plain
        named.acknowledgedDuplicates = [4]
        let namedBytes = ServerMessage.download(named).encoded()
        // Without duplicates, a download is type 0x82 as before (what an older client reads); with them, type
        // 0x87 and the list after the digests.
        #expect(plainBytes[0] == 0x82)
        #expect(namedBytes == [0x87] + plainBytes.dropFirst() + [1, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0])
        #expect(try ServerMessage(decoding: namedBytes) == .download(named))
        #expect(ServerMessage.download(named).encodedSize == namedBytes.count)
        #expect(ServerMessage.download(named).encodedChunks().joined().elementsEqual(namedBytes))
        func list(_ versions: [UInt64]) -> [UInt8] {
            var writer = ByteWriter()
            writer.write(UInt32(versions.count))
            for version in versions { writer.write(version) }
            return writer.bytes
        }
        for bad in [[], [3], [1], [5], [4, 2], [2, 2]] as [[UInt64]] {
            #expect(throws: WireError.self, "duplicates \(bad)") {
                try ServerMessage(decoding: [0x87] + plainBytes.dropFirst() + list(bad))
            }
        }
        var both = plain
        both.acknowledgedDuplicates = [2, 4]
        #expect(try ServerMessage(decoding: [0x87] + plainBytes.dropFirst() + list([2, 4])) == .download(both))
        // A 0x82 download followed by a list is refused: the list belongs to type 0x87 only.
        #expect(throws: WireError.trailingBytes(12)) { try ServerMessage(decoding: plainBytes + list([4])) }
    }

    @Test func oversizeInputIsRejectedBeforeDecoding() throws {
        let ping = ClientMessage.ping(id: 42).encoded()
        #expect(try ClientMessage(decoding: ping, maximumSize: ping.count) == .ping(id: 42))
        #expect(throws: WireError.messageTooLarge(9, limit: 8)) { try ClientMessage(decoding: ping, maximumSize: 8) }
        // Garbage over the limit reports the size, not the garbage.
        #expect(throws: WireError.messageTooLarge(10, limit: 4)) {
            try ServerMessage(decoding: Array(repeating: 0xEE, count: 10), maximumSize: 4)
        }
        let big = ClientMessage.upload(
            Upload(
                sessionID: 1,
                changesets: [
                    UploadChangeset(clientVersion: 1, data: Array(repeating: 1, count: WireProtocol.maximumMessageSize))
                ])
        )
        .encoded()
        #expect(throws: WireError.messageTooLarge(big.count, limit: 16 * 1024 * 1024)) {
            try ClientMessage(decoding: big)
        }
    }
}
