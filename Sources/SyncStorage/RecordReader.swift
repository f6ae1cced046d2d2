import SyncStreams

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads a record log's records by location, from any thread, with a read-only descriptor of its own
/// (taking no lock: it reads only records an append already made durable). Each read checks the record's
/// header and checksum, so a location that is wrong, or a record damaged since it was written, is a typed
/// error — never wrong bytes.
public final class RecordReader: Sendable {
    public let path: String
    private let fileSystem: any FileSystem
    private let descriptor: Locked<Int32>

    init(path: String, fileSystem: any FileSystem) throws(RecordLogError) {
        switch fileSystem.open(path, flags: O_RDONLY | O_CLOEXEC, mode: 0) {
        case .success(let opened): descriptor = Locked(opened)
        case .failure(let error): throw .cannotOpen(path: path, errno: error.code)
        }
        self.path = path
        self.fileSystem = fileSystem
    }

    deinit { close() }

    /// The payload of the record at `location`.
    ///
    /// - Throws: `.closed` after `close()`, `.badLocation`, `.readFailed`.
    public func read(_ location: RecordLocation) throws(RecordLogError) -> [UInt8] {
        let descriptor = descriptor.withLock { $0 }
        guard descriptor >= 0 else { throw .closed }
        guard location.offset >= UInt64(RecordFormat.fileHeaderSize) else {
            throw .badLocation(path: path, offset: location.offset)
        }
        return try Self.read(location, from: descriptor, fileSystem: fileSystem, path: path)
    }

    /// Closes the descriptor; later reads throw `.closed`. Idempotent.
    public func close() {
        let closing = descriptor.withLock { descriptor in
            defer { descriptor = -1 }
            return descriptor
        }
        if closing >= 0 { fileSystem.close(closing) }
    }

    /// Reads and checks the record at `location` through `descriptor`.
    static func read(
        _ location: RecordLocation,
        from descriptor: Int32,
        fileSystem: any FileSystem,
        path: String
    ) throws(RecordLogError) -> [UInt8] {
        guard let length = Int(exactly: location.length), length <= RecordLog.maximumRecordSize,
            let offset = Int64(exactly: location.offset)
        else { throw .badLocation(path: path, offset: location.offset) }
        let total = RecordFormat.recordHeaderSize + length
        var bytes = [UInt8](repeating: 0, count: total)
        var filled = 0
        while filled < total {
            let result = bytes.withUnsafeMutableBytes { buffer in
                fileSystem.read(
                    descriptor, into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]),
                    at: offset + Int64(filled))
            }
            switch result {
            case .failure(let error): throw .readFailed(path: path, errno: error.code)
            case .success(0): throw .badLocation(path: path, offset: location.offset)
            case .success(let count): filled += count
            }
        }
        let intact = bytes.withUnsafeBytes { buffer -> Bool in
            guard let (headerLength, checksum) = RecordFormat.parseHeader(buffer), headerLength == location.length
            else { return false }
            let payload = UnsafeRawBufferPointer(rebasing: buffer[RecordFormat.recordHeaderSize...])
            return RecordFormat.checksum(length: headerLength, payload: payload) == checksum
        }
        guard intact else { throw .badLocation(path: path, offset: location.offset) }
        return Array(bytes[RecordFormat.recordHeaderSize...])
    }
}
