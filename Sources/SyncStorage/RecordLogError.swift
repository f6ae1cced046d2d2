#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a `RecordLog` operation failed. `errno` values are the operating system's, as reported by the
/// failing call.
public enum RecordLogError: Error, Sendable, Hashable, CustomStringConvertible {
    /// `open` failed (for example `ENOENT` when the parent directory does not exist, `EACCES`).
    case cannotOpen(path: String, errno: Int32)
    /// The file exists but does not start with a record log header of a version this build reads.
    case notARecordLog(path: String)
    /// Reading the file (while opening it) failed.
    case readFailed(path: String, errno: Int32)
    /// Writing or truncating the file failed. When an append fails this way, the file has been cut back
    /// to its length before the append (as far as the system allowed).
    case writeFailed(path: String, errno: Int32)
    /// `fsync` of the file, or of its directory when the file was created, failed. When an append fails
    /// this way, the file has been cut back to its length before the append (as far as the system
    /// allowed); the records are not durable and the caller must not treat them as written.
    case syncFailed(path: String, errno: Int32)
    /// A record of `Int` bytes exceeds `limit` (`RecordLog.maximumRecordSize`); nothing was written.
    case recordTooLarge(Int, limit: Int)
    /// The log was closed; nothing was written.
    case closed

    /// A one-line explanation, including the system's text for the `errno` value.
    public var description: String {
        switch self {
        case .cannotOpen(let path, let code): "cannot open record log \(path): \(describe(code))"
        case .notARecordLog(let path): "\(path) is not a record log (wrong header)"
        case .readFailed(let path, let code): "cannot read record log \(path): \(describe(code))"
        case .writeFailed(let path, let code): "cannot write record log \(path): \(describe(code))"
        case .syncFailed(let path, let code): "cannot fsync record log \(path): \(describe(code))"
        case .recordTooLarge(let size, let limit): "record of \(size) bytes exceeds the limit of \(limit) bytes"
        case .closed: "the record log is closed"
        }
    }
}

/// `strerror`'s text and the number, e.g. "No such file or directory (errno 2)".
private func describe(_ code: Int32) -> String {
    "\(String(cString: strerror(code))) (errno \(code))"
}
