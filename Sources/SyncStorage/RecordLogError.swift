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
    /// Another open log (in this process or another) holds the file's exclusive lock: one writer per file.
    case locked(path: String)
    /// The file exists but does not start with a record log header.
    case notARecordLog(path: String)
    /// The file is a record log of a format version this build does not read.
    case unsupportedVersion(path: String, version: UInt16)
    /// The file is damaged at byte `offset`: a record there is bad and an intact record follows it, so
    /// this is not a write torn by a crash. Nothing was changed in the file.
    case corrupted(path: String, offset: UInt64)
    /// Reading the file failed.
    case readFailed(path: String, errno: Int32)
    /// Writing or truncating the file failed. When an append fails this way, the file has been cut back
    /// to its length before the append.
    case writeFailed(path: String, errno: Int32)
    /// `fsync` (or `F_FULLFSYNC`) of the file, or of its directory when the file was created, failed. The
    /// records are not durable and the caller must not treat them as written; the log is poisoned.
    case syncFailed(path: String, errno: Int32)
    /// An earlier fsync or truncate failed, so what the file holds on disk is unknown: every append fails
    /// from then on (the PostgreSQL "fsyncgate" lesson: a retried fsync can succeed without the lost pages
    /// ever reaching the disk). Reopen the log to recover what is durable.
    case poisoned(path: String, errno: Int32)
    /// A record of `Int` bytes exceeds `limit` (`RecordLog.maximumRecordSize`); nothing was written.
    case recordTooLarge(Int, limit: Int)
    /// The location does not hold an intact record of this log.
    case badLocation(path: String, offset: UInt64)
    /// The log was closed; nothing was written.
    case closed

    /// A one-line explanation, including the system's text for the `errno` value.
    public var description: String {
        switch self {
        case .cannotOpen(let path, let code): "cannot open record log \(path): \(describe(code))"
        case .locked(let path): "record log \(path) is open elsewhere (locked)"
        case .notARecordLog(let path): "\(path) is not a record log (wrong header)"
        case .unsupportedVersion(let path, let version): "\(path) is a record log of format version \(version)"
        case .corrupted(let path, let offset): "record log \(path) is corrupted at byte \(offset)"
        case .readFailed(let path, let code): "cannot read record log \(path): \(describe(code))"
        case .writeFailed(let path, let code): "cannot write record log \(path): \(describe(code))"
        case .syncFailed(let path, let code): "cannot fsync record log \(path): \(describe(code))"
        case .poisoned(let path, let code):
            "record log \(path) refuses appends after a failed fsync or truncate (\(describe(code)))"
        case .recordTooLarge(let size, let limit): "record of \(size) bytes exceeds the limit of \(limit) bytes"
        case .badLocation(let path, let offset): "no intact record at byte \(offset) of \(path)"
        case .closed: "the record log is closed"
        }
    }
}

/// `strerror`'s text and the number, e.g. "No such file or directory (errno 2)".
private func describe(_ code: Int32) -> String {
    "\(String(cString: strerror(code))) (errno \(code))"
}
