extension ServerMessage {
    /// The message's binary form: its type byte, then its fields in declaration order (see
    /// `docs/Protocol.md`). Allocates once: the exact size is computed first.
    ///
    /// Does not check `WireProtocol.maximumMessageSize`; the receiver does.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: encodedSize)
        switch self {
        case .welcome(let protocolVersion, let maximumMessageBytes):
            writer.write(MessageType.welcome)
            writer.write(protocolVersion)
            // Version 5's field (a welcome of version 5 or later must carry it; one of version 4 or
            // earlier must not: the decoder reads it by the version).
            if let maximumMessageBytes { writer.write(maximumMessageBytes) }
        case .download(let download):
            writer.write(download.messageType)
            writer.write(download.sessionID)
            writer.write(UInt32(download.entries.count))
            for entry in download.entries {
                switch entry {
                case .changeset(let serverVersion, let data):
                    writer.write(DownloadEntryTag.changeset)
                    writer.write(serverVersion)
                    writer.writeBytes(data)
                case .acknowledged(let serverVersion, let clientVersion):
                    writer.write(DownloadEntryTag.acknowledged)
                    writer.write(serverVersion)
                    writer.write(clientVersion)
                }
            }
            download.writeTrailer(into: &writer)
        case .unbound(let sessionID):
            writer.write(MessageType.unbound)
            writer.write(sessionID)
        case .pong(let id):
            writer.write(MessageType.pong)
            writer.write(id)
        case .marked(let sessionID, let id):
            writer.write(MessageType.marked)
            writer.write(sessionID)
            writer.write(id)
        case .error(let error):
            writer.write(MessageType.error)
            writer.writeOptional(error.sessionID)
            writer.write(error.code.rawValue)
            writer.writeString(error.message)
            writer.writeOptional(error.retryAfterMilliseconds)
            if let reset = error.clientReset {
                writer.write(UInt8(1))
                writer.write(reset.reason.rawValue)
                writer.write(reset.serverVersion)
                writer.write(reset.lastIntegratedClientVersion)
            } else {
                writer.write(UInt8(0))
            }
        }
        return writer.bytes
    }

    /// Decodes a message written by `encoded()`.
    ///
    /// Throws `.messageTooLarge` if `bytes` is longer than `maximumSize` (before reading anything),
    /// `.unknownMessageType` for a first byte that is not a server message, `.truncated`,
    /// `.lengthTooLarge`, `.invalidUTF8`, `.unknownTag` or `.invalidValue` (unknown `ProtocolErrorCode` or
    /// `ClientResetReason`, presence flag other than 0 or 1) for a bad field, and `.trailingBytes` if bytes
    /// follow the message.
    /// Never traps; allocates at most in proportion to `bytes.count`.
    public init(decoding bytes: [UInt8], maximumSize: Int = WireProtocol.maximumMessageSize) throws(WireError) {
        var (reader, type) = try ByteReader.message(bytes, maximumSize: maximumSize)
        switch type {
        case MessageType.welcome:
            let protocolVersion = try reader.readUInt16()
            // A welcome before version 5 ends here; from version 5 the server's message limit follows.
            let maximumMessageBytes = protocolVersion >= 5 ? try reader.readUInt32() : nil
            self = .welcome(protocolVersion: protocolVersion, maximumMessageBytes: maximumMessageBytes)
        case MessageType.download, MessageType.downloadWithDuplicates:
            let sessionID = try reader.readUInt32()
            // The smallest entry is a changeset: tag, UInt64 version, length prefix.
            let count = try reader.readCount(minimumElementSize: 1 + 8 + EncodedSize.lengthPrefix)
            var entries: [DownloadEntry] = []
            entries.reserveCapacity(count)
            for _ in 0..<count {
                switch try reader.readUInt8() {
                case DownloadEntryTag.changeset:
                    let serverVersion = try reader.readUInt64()
                    entries.append(.changeset(serverVersion: serverVersion, data: try reader.readBytes()))
                case DownloadEntryTag.acknowledged:
                    let serverVersion = try reader.readUInt64()
                    entries.append(.acknowledged(serverVersion: serverVersion, clientVersion: try reader.readUInt64()))
                case let tag:
                    throw .unknownTag("DownloadEntry", tag)
                }
            }
            let remainingBytes = try reader.readUInt64()
            let historyID = try reader.readOptionalUInt64()
            let digestCount = try reader.readCount(minimumElementSize: 4)
            let acknowledgements = entries.count(where: { if case .acknowledged = $0 { true } else { false } })
            guard digestCount == 0 || digestCount == acknowledgements else {
                throw .invalidValue("\(digestCount) acknowledgement digests for \(acknowledgements) acknowledgements")
            }
            var digests: [UInt32] = []
            digests.reserveCapacity(digestCount)
            for _ in 0..<digestCount { digests.append(try reader.readUInt32()) }
            // Version 9: the acknowledgements that are duplicates, in a download of their type.
            var duplicates: [UInt64] = []
            if type == MessageType.downloadWithDuplicates {
                let duplicateCount = try reader.readCount(minimumElementSize: 8)
                duplicates.reserveCapacity(duplicateCount)
                for _ in 0..<duplicateCount { duplicates.append(try reader.readUInt64()) }
                try Download.checkDuplicates(duplicates, of: entries)
            }
            self = .download(
                Download(
                    sessionID: sessionID, entries: entries, remainingBytes: remainingBytes, historyID: historyID,
                    acknowledgedDigests: digests, acknowledgedDuplicates: duplicates))
        case MessageType.unbound:
            self = .unbound(sessionID: try reader.readUInt32())
        case MessageType.pong:
            self = .pong(id: try reader.readUInt64())
        case MessageType.marked:
            let sessionID = try reader.readUInt32()
            self = .marked(sessionID: sessionID, id: try reader.readUInt64())
        case MessageType.error:
            let sessionID = try reader.readOptionalUInt32()
            let rawCode = try reader.readUInt16()
            guard let code = ProtocolErrorCode(rawValue: rawCode) else {
                throw .invalidValue("unknown ProtocolErrorCode \(rawCode)")
            }
            let message = try reader.readString()
            let retryAfter = try reader.readOptionalUInt32()
            let clientReset = try reader.readOptionalClientResetDetails()
            self = .error(
                ProtocolError(
                    sessionID: sessionID, code: code, message: message, retryAfterMilliseconds: retryAfter,
                    clientReset: clientReset))
        default:
            throw .unknownMessageType(type)
        }
        try reader.expectEnd()
    }

    /// The exact length of `encoded()`, computed without encoding.
    public var encodedSize: Int {
        switch self {
        case .welcome(_, let maximumMessageBytes):
            1 + 2 + (maximumMessageBytes == nil ? 0 : 4)
        case .download(let download):
            download.entries.reduce(
                1 + 4 + 4 + 8 + (download.historyID == nil ? 1 : 9) + 4 + 4 * download.acknowledgedDigests.count
                    + (download.acknowledgedDuplicates.isEmpty ? 0 : 4 + 8 * download.acknowledgedDuplicates.count)
            ) { size, entry in
                switch entry {
                case .changeset(_, let data): size + 1 + 8 + EncodedSize.bytes(data)
                case .acknowledged: size + 1 + 8 + 8
                }
            }
        case .unbound:
            1 + 4
        case .pong:
            1 + 8
        case .marked:
            1 + 4 + 8
        case .error(let error):
            1 + (error.sessionID == nil ? 1 : 5) + 2 + EncodedSize.string(error.message)
                + (error.retryAfterMilliseconds == nil ? 1 : 5) + (error.clientReset == nil ? 1 : 1 + 1 + 8 + 8)
        }
    }
}

extension ByteReader {
    /// Reads an optional `ClientResetDetails`: a presence flag (0 or 1), then the reason (`u8`, a known
    /// `ClientResetReason`), the server version and the last integrated client version (`u64` each).
    mutating func readOptionalClientResetDetails() throws(WireError) -> ClientResetDetails? {
        switch try readUInt8() {
        case 0:
            return nil
        case 1:
            let rawReason = try readUInt8()
            guard let reason = ClientResetReason(rawValue: rawReason) else {
                throw .invalidValue("unknown ClientResetReason \(rawReason)")
            }
            let serverVersion = try readUInt64()
            return ClientResetDetails(
                reason: reason, serverVersion: serverVersion, lastIntegratedClientVersion: try readUInt64())
        case let flag:
            throw .invalidValue("presence flag \(flag) (must be 0 or 1)")
        }
    }
}
