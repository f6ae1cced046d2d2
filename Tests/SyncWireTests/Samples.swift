import SyncWire

/// Messages covering every case and the edge values of every field.
enum Samples {
    static let client: [ClientMessage] = [
        .hello(Hello(credential: .anonymous)),
        .hello(Hello(protocolVersion: 0, credential: .apiKey(""))),
        .hello(Hello(protocolVersion: .max, credential: .apiKey("key-🔑-ключ"))),
        .bind(Bind(sessionID: 0, partition: "", clientFileID: 0, downloadedVersion: 0)),
        .bind(
            Bind(
                sessionID: .max, partition: "tâches/日本語\u{0}", clientFileID: .max, downloadedVersion: .max,
                historyID: .max, acknowledgedClientVersion: .max)),
        .bind(
            Bind(
                sessionID: 1, partition: "p", clientFileID: 2, downloadedVersion: 3, historyID: 4,
                acknowledgedClientVersion: 5, checkpoint: LogCheckpoint(serverVersion: 0, digest: 0))),
        .bind(
            Bind(
                sessionID: .max, partition: "p", clientFileID: .max, downloadedVersion: .max, historyID: .max,
                acknowledgedClientVersion: .max, checkpoint: LogCheckpoint(serverVersion: .max, digest: .max))),
        .bind(
            Bind(
                sessionID: 3, partition: "p", clientFileID: 2, downloadedVersion: 3, historyID: 4,
                acknowledgedClientVersion: 5, checkpoint: LogCheckpoint(serverVersion: 3, digest: 7, coversPrefix: true)
            )),
        .upload(Upload(sessionID: 1, changesets: [])),
        .upload(
            Upload(
                sessionID: 7,
                changesets: [
                    UploadChangeset(clientVersion: 1, data: []),
                    UploadChangeset(clientVersion: 2, data: [0, 1, 2, 255]),
                    UploadChangeset(clientVersion: .max, data: Array(repeating: 0xAB, count: 300)),
                ])),
        .upload(
            Upload(
                sessionID: .max,
                changesets: [
                    UploadChangeset(
                        clientVersion: 1, data: [], origin: ChangesetOrigin(clientFileID: .max, clientVersion: .max)),
                    UploadChangeset(clientVersion: 2, data: [9]),
                    UploadChangeset(
                        clientVersion: 3, data: [0, 1], origin: ChangesetOrigin(clientFileID: 0, clientVersion: 0)),
                ])),
        .unbind(sessionID: 0),
        .unbind(sessionID: .max),
        .ping(id: 0),
        .ping(id: .max),
        .mark(sessionID: 0, id: 0),
        .mark(sessionID: .max, id: .max),
    ]

    static let server: [ServerMessage] =
        [
            .welcome(protocolVersion: 1),
            .welcome(protocolVersion: .max, maximumMessageBytes: 1),
            .welcome(protocolVersion: 4),
            .welcome(protocolVersion: 5, maximumMessageBytes: 0),
            .welcome(protocolVersion: 5, maximumMessageBytes: .max),
            .download(Download(sessionID: 0, entries: [], remainingBytes: 0)),
            .download(Download(sessionID: 1, entries: [], remainingBytes: 0, historyID: 0)),
            .download(Download(sessionID: 2, entries: [], remainingBytes: 7, historyID: .max)),
            .download(
                Download(
                    sessionID: .max,
                    entries: [
                        .changeset(serverVersion: 1, data: []),
                        .acknowledged(serverVersion: 2, clientVersion: 1),
                        .changeset(serverVersion: 3, data: [9, 8, 7]),
                        .acknowledged(serverVersion: .max, clientVersion: .max),
                    ],
                    remainingBytes: .max)),
            .download(
                Download(
                    sessionID: 4,
                    entries: [
                        .acknowledged(serverVersion: 2, clientVersion: 1),
                        .changeset(serverVersion: 3, data: [9]),
                        .acknowledged(serverVersion: 4, clientVersion: 2),
                    ],
                    remainingBytes: 0, historyID: 5, acknowledgedDigests: [0, .max])),
            // Version 9: the acknowledgements that are duplicates.
            .download(
                Download(
                    sessionID: 5,
                    entries: [
                        .acknowledged(serverVersion: 2, clientVersion: 1),
                        .changeset(serverVersion: 3, data: [9]),
                        .acknowledged(serverVersion: 4, clientVersion: 2),
                        .acknowledged(serverVersion: .max, clientVersion: 3),
                    ],
                    remainingBytes: 0, acknowledgedDigests: [1, 2, 3], acknowledgedDuplicates: [2, .max])),
            .unbound(sessionID: 3),
            .pong(id: 0),
            .pong(id: .max),
            .marked(sessionID: 0, id: 0),
            .marked(sessionID: .max, id: .max),
            .error(ProtocolError(code: .malformedMessage, message: "")),
            .error(
                ProtocolError(
                    sessionID: .max, code: .serverBusy, message: "busy — réessayez 🙏", retryAfterMilliseconds: .max)),
            .error(ProtocolError(sessionID: 0, code: .internalError, message: "disk", retryAfterMilliseconds: nil)),
            .error(ProtocolError(sessionID: nil, code: .badClientVersion, message: "x", retryAfterMilliseconds: 0)),
            .error(
                ProtocolError(
                    sessionID: 2, code: .clientResetRequired, message: "reset",
                    clientReset: ClientResetDetails(
                        reason: .clientExpired, serverVersion: 0, lastIntegratedClientVersion: 0))
            ),
            .error(
                ProtocolError(
                    sessionID: .max, code: .clientResetRequired, message: "", retryAfterMilliseconds: 1,
                    clientReset: ClientResetDetails(
                        reason: .historyLost, serverVersion: .max, lastIntegratedClientVersion: .max))),
        ] + ProtocolErrorCode.allCases.map { .error(ProtocolError(sessionID: 1, code: $0, message: "\($0)")) }
}
