extension ClientMessage {
    /// The message's binary form: its type byte, then its fields in declaration order (see
    /// `docs/Protocol.md`). Allocates once: the exact size is computed first.
    ///
    /// Does not check `WireProtocol.maximumMessageSize`; the receiver does.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: encodedSize)
        switch self {
        case .hello(let hello):
            writer.write(MessageType.hello)
            writer.write(hello.protocolVersion)
            switch hello.credential {
            case .anonymous:
                writer.write(CredentialTag.anonymous)
            case .apiKey(let key):
                writer.write(CredentialTag.apiKey)
                writer.writeString(key)
            }
        case .bind(let bind):
            writer.write(
                bind.checkpoint.map {
                    $0.coversPrefix ? MessageType.bindWithPrefixCheckpoint : MessageType.bindWithCheckpoint
                }
                    ?? MessageType.bind)
            writer.write(bind.sessionID)
            writer.writeString(bind.partition)
            writer.write(bind.clientFileID)
            writer.write(bind.downloadedVersion)
            writer.write(bind.historyID)
            writer.write(bind.acknowledgedClientVersion)
            // Version 6: type `bindWithCheckpoint` ends with it; type `bind` names none.
            if let checkpoint = bind.checkpoint {
                writer.write(checkpoint.serverVersion)
                writer.write(checkpoint.digest)
            }
        case .upload(let upload):
            let origins = upload.changesets.enumerated().compactMap { index, changeset in
                changeset.origin.map { (index, $0) }
            }
            writer.write(origins.isEmpty ? MessageType.upload : MessageType.uploadWithOrigins)
            writer.write(upload.sessionID)
            writer.write(UInt32(upload.changesets.count))
            for changeset in upload.changesets {
                writer.write(changeset.clientVersion)
                writer.writeBytes(changeset.data)
            }
            // Version 7: type `uploadWithOrigins` ends with the origins; type `upload` names none.
            if !origins.isEmpty {
                writer.write(UInt32(origins.count))
                for (index, origin) in origins {
                    writer.write(UInt32(index))
                    writer.write(origin.clientFileID)
                    writer.write(origin.clientVersion)
                }
            }
        case .unbind(let sessionID):
            writer.write(MessageType.unbind)
            writer.write(sessionID)
        case .ping(let id):
            writer.write(MessageType.ping)
            writer.write(id)
        case .mark(let sessionID, let id):
            writer.write(MessageType.mark)
            writer.write(sessionID)
            writer.write(id)
        }
        return writer.bytes
    }

    /// Decodes a message written by `encoded()`.
    ///
    /// Throws `.messageTooLarge` if `bytes` is longer than `maximumSize` (before reading anything),
    /// `.unknownMessageType` for a first byte that is not a client message, `.truncated`,
    /// `.lengthTooLarge`, `.invalidUTF8`, `.unknownTag` or `.invalidValue` for a bad field, and
    /// `.trailingBytes` if bytes follow the message. Never traps; allocates at most in proportion to
    /// `bytes.count`.
    public init(decoding bytes: [UInt8], maximumSize: Int = WireProtocol.maximumMessageSize) throws(WireError) {
        var (reader, type) = try ByteReader.message(bytes, maximumSize: maximumSize)
        switch type {
        case MessageType.hello:
            let version = try reader.readUInt16()
            let credential: WireCredential
            switch try reader.readUInt8() {
            case CredentialTag.anonymous: credential = .anonymous
            case CredentialTag.apiKey: credential = .apiKey(try reader.readString())
            case let tag: throw .unknownTag("WireCredential", tag)
            }
            self = .hello(Hello(protocolVersion: version, credential: credential))
        case MessageType.bind, MessageType.bindWithCheckpoint, MessageType.bindWithPrefixCheckpoint:
            let sessionID = try reader.readUInt32()
            let partition = try reader.readString()
            let clientFileID = try reader.readUInt64()
            let downloadedVersion = try reader.readUInt64()
            let historyID = try reader.readUInt64()
            let acknowledgedClientVersion = try reader.readUInt64()
            var checkpoint: LogCheckpoint?
            if type != MessageType.bind {
                let version = try reader.readUInt64()
                checkpoint = LogCheckpoint(
                    serverVersion: version, digest: try reader.readUInt32(),
                    coversPrefix: type == MessageType.bindWithPrefixCheckpoint)
            }
            self = .bind(
                Bind(
                    sessionID: sessionID, partition: partition, clientFileID: clientFileID,
                    downloadedVersion: downloadedVersion, historyID: historyID,
                    acknowledgedClientVersion: acknowledgedClientVersion, checkpoint: checkpoint))
        case MessageType.upload, MessageType.uploadWithOrigins:
            let sessionID = try reader.readUInt32()
            // Each changeset is at least a UInt64 version and a length prefix.
            let count = try reader.readCount(minimumElementSize: 8 + EncodedSize.lengthPrefix)
            var changesets: [UploadChangeset] = []
            changesets.reserveCapacity(count)
            for _ in 0..<count {
                let clientVersion = try reader.readUInt64()
                let data = try reader.readBytes()
                changesets.append(UploadChangeset(clientVersion: clientVersion, data: data))
            }
            if type == MessageType.uploadWithOrigins {
                // Each origin is a u32 index and two u64s; at least one, in increasing index.
                let originCount = try reader.readCount(minimumElementSize: 4 + 8 + 8)
                guard originCount >= 1 else { throw .invalidValue("an upload with origins that names none") }
                var previous: Int?
                for _ in 0..<originCount {
                    let index = Int(try reader.readUInt32())
                    guard index < changesets.count, previous.map({ index > $0 }) ?? true else {
                        throw .invalidValue("origin index \(index) (not increasing, or past the changesets)")
                    }
                    previous = index
                    let clientFileID = try reader.readUInt64()
                    changesets[index].origin = ChangesetOrigin(
                        clientFileID: clientFileID, clientVersion: try reader.readUInt64())
                }
            }
            self = .upload(Upload(sessionID: sessionID, changesets: changesets))
        case MessageType.unbind:
            self = .unbind(sessionID: try reader.readUInt32())
        case MessageType.ping:
            self = .ping(id: try reader.readUInt64())
        case MessageType.mark:
            let sessionID = try reader.readUInt32()
            self = .mark(sessionID: sessionID, id: try reader.readUInt64())
        default:
            throw .unknownMessageType(type)
        }
        try reader.expectEnd()
    }

    /// The exact length of `encoded()`, computed without encoding.
    public var encodedSize: Int {
        switch self {
        case .hello(let hello):
            switch hello.credential {
            case .anonymous: 1 + 2 + 1
            case .apiKey(let key): 1 + 2 + 1 + EncodedSize.string(key)
            }
        case .bind(let bind):
            1 + 4 + EncodedSize.string(bind.partition) + 8 + 8 + 8 + 8 + (bind.checkpoint == nil ? 0 : 8 + 4)
        case .upload(let upload):
            upload.changesets.reduce(1 + 4 + 4) {
                $0 + 8 + EncodedSize.bytes($1.data) + ($1.origin == nil ? 0 : EncodedSize.origin)
            } + (upload.changesets.contains { $0.origin != nil } ? EncodedSize.originCount : 0)
        case .unbind:
            1 + 4
        case .ping:
            1 + 8
        case .mark:
            1 + 4 + 8
        }
    }
}
