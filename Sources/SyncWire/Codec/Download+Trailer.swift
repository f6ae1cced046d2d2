extension Download {
    /// Its message type: `downloadWithDuplicates` when it names duplicate acknowledgements, else `download`.
    var messageType: UInt8 {
        acknowledgedDuplicates.isEmpty ? MessageType.download : MessageType.downloadWithDuplicates
    }

    /// Writes what follows a download's entries: the remaining bytes, the history id, the acknowledgement
    /// digests (version 4) and, in a `downloadWithDuplicates`, the duplicate acknowledgements (version 9). Shared by
    /// `ServerMessage.encoded()` and `encodedChunks()`.
    func writeTrailer(into writer: inout ByteWriter) {
        writer.write(remainingBytes)
        writer.writeOptional(historyID)
        writer.write(UInt32(acknowledgedDigests.count))
        for digest in acknowledgedDigests { writer.write(digest) }
        guard !acknowledgedDuplicates.isEmpty else { return }
        writer.write(UInt32(acknowledgedDuplicates.count))
        for version in acknowledgedDuplicates { writer.write(version) }
    }

    /// Checks decoded `acknowledgedDuplicates`: at least one, in increasing order, each the server version
    /// of an `.acknowledged` entry of `entries`.
    ///
    /// - Throws: `.invalidValue` otherwise.
    static func checkDuplicates(_ duplicates: [UInt64], of entries: [DownloadEntry]) throws(WireError) {
        guard !duplicates.isEmpty else {
            throw .invalidValue("a download of type 0x87 without duplicate acknowledgements")
        }
        var acknowledged = entries.lazy.compactMap { entry -> UInt64? in
            if case .acknowledged(let version, _) = entry { version } else { nil }
        }.makeIterator()
        // Both lists are in increasing order: each duplicate is found among the acknowledgements after the
        // previous one's.
        for version in duplicates {
            var found = false
            while let next = acknowledged.next(), next <= version {
                if next == version {
                    found = true
                    break
                }
            }
            guard found else {
                throw .invalidValue("duplicate acknowledgement \(version) is not an acknowledgement of the download")
            }
        }
    }
}
