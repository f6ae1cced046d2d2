import Foundation

/// What a partition knows of its client files' comings and goings, for the maximum offline time: when
/// each was last seen, what of that is recorded durably, and which client files were forgotten. Owned by
/// its `Partition`; used only on `ServerCore`'s executor.
final class ClientFileRegistry {
    /// When each client file not forgotten was last seen, as far as the server knows: exact while it
    /// runs; after a restart, what was recorded plus the record interval (a record may lag that much).
    var lastSeen: [UInt64: Date] = [:]
    /// The last-seen time recorded durably, per client file.
    var recordedSeen: [UInt64: Date] = [:]
    /// The forgotten client files, each with the highest client version of it the log holds.
    var expired: [UInt64: UInt64] = [:]
    /// When the whole partition was last checked for client files offline too long.
    var lastSweep: Date?

    /// Adopts the durable records read from the store (the latest per client file counts).
    func restore(_ records: [ClientFileRecord], recordInterval: TimeInterval) {
        for record in records {
            switch record {
            case .seen(let id, let date):
                recordedSeen[id] = date
                lastSeen[id] = date.addingTimeInterval(recordInterval)
                expired[id] = nil
            case .expired(let id, let version, _):
                expired[id] = version
                lastSeen[id] = nil
                recordedSeen[id] = nil
            }
        }
    }
}
