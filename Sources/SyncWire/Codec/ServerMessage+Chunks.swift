extension ServerMessage {
    /// Changesets of at least this many bytes are chunks of their own in `encodedChunks()` (smaller ones
    /// are copied: a chunk of its own costs more than copying a few bytes).
    package static let sharedChangesetBytes = 1024

    /// `encoded()` as consecutive chunks whose concatenation is exactly `encoded()`. A download's
    /// changesets of `sharedChangesetBytes` or more are chunks of their own: the entry's own array, not a
    /// copy. So a changeset fanned out to many subscribers is encoded once — its bytes stay the one buffer
    /// the server holds, and each subscriber's message adds only its few bytes of framing around it.
    package func encodedChunks() -> [[UInt8]] {
        guard case .download(let download) = self,
            download.entries.contains(where: { entry in
                if case .changeset(_, let data) = entry { return data.count >= Self.sharedChangesetBytes }
                return false
            })
        else { return [encoded()] }
        var chunks: [[UInt8]] = []
        var writer = ByteWriter()
        writer.write(download.messageType)
        writer.write(download.sessionID)
        writer.write(UInt32(download.entries.count))
        for entry in download.entries {
            switch entry {
            case .changeset(let serverVersion, let data):
                writer.write(DownloadEntryTag.changeset)
                writer.write(serverVersion)
                if data.count >= Self.sharedChangesetBytes {
                    writer.write(UInt32(data.count))
                    chunks.append(writer.bytes)
                    chunks.append(data)
                    writer = ByteWriter()
                } else {
                    writer.writeBytes(data)
                }
            case .acknowledged(let serverVersion, let clientVersion):
                writer.write(DownloadEntryTag.acknowledged)
                writer.write(serverVersion)
                writer.write(clientVersion)
            }
        }
        download.writeTrailer(into: &writer)
        chunks.append(writer.bytes)
        return chunks
    }
}
