import Foundation

/// What a server records durably about a partition's client files, beside the partition's log, when it
/// runs with a maximum offline time (`SyncServer.Configuration.maximumOfflineTime`): when each was last
/// seen, and which it forgot after they were offline too long. For one client file the latest record
/// counts; an `.expired` one is final.
public enum ClientFileRecord: Sendable, Hashable {
    /// The client file was seen (bound, uploaded or unbound) at `date`.
    case seen(clientFileID: UInt64, at: Date)
    /// The server forgot the client file at `date` after it was offline too long; its changesets up to
    /// client version `lastIntegratedClientVersion` are in the log. Binding it again is
    /// `clientResetRequired`.
    case expired(clientFileID: UInt64, lastIntegratedClientVersion: UInt64, at: Date)

    /// The client file the record is about.
    public var clientFileID: UInt64 {
        switch self {
        case .seen(let id, _), .expired(let id, _, _): id
        }
    }

    /// The record's bytes in a `FilePartitionStore`'s side file (little-endian): `u8 1`, `u64 clientFileID`,
    /// `i64 milliseconds since 1970` for `.seen`; `u8 2`, `u64 clientFileID`, `u64 lastIntegratedClientVersion`,
    /// `i64 milliseconds since 1970` for `.expired`.
    func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        func append(_ value: UInt64) {
            for shift in stride(from: 0, to: 64, by: 8) {
                bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
            }
        }
        switch self {
        case .seen(let id, let date):
            bytes.append(1)
            append(id)
            append(UInt64(bitPattern: Self.milliseconds(date)))
        case .expired(let id, let version, let date):
            bytes.append(2)
            append(id)
            append(version)
            append(UInt64(bitPattern: Self.milliseconds(date)))
        }
        return bytes
    }

    /// The record in `payload`; `nil` if it is not one.
    init?(decoding payload: UnsafeRawBufferPointer) {
        func u64(_ at: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(payload[at + $1]) << UInt64($1 * 8) } }
        func date(_ at: Int) -> Date { Date(timeIntervalSince1970: Double(Int64(bitPattern: u64(at))) / 1000) }
        switch (payload.first, payload.count) {
        case (1, 17): self = .seen(clientFileID: u64(1), at: date(9))
        case (2, 25): self = .expired(clientFileID: u64(1), lastIntegratedClientVersion: u64(9), at: date(17))
        default: return nil
        }
    }

    private static func milliseconds(_ date: Date) -> Int64 {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded(.down)
        guard milliseconds.isFinite else { return 0 }
        if milliseconds >= 9.2e18 { return .max }
        if milliseconds <= -9.2e18 { return .min }
        return Int64(milliseconds)
    }
}
