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

/// The settings of client-file tracking: on when the server has a maximum offline time.
struct ClientFileTracking: Sendable {
    let store: any PartitionStore
    let clock: @Sendable () -> Date
    /// The maximum offline time, in seconds.
    let maximumOffline: TimeInterval
    /// How far a durable last-seen record may lag behind: 1 % of the maximum.
    var recordInterval: TimeInterval { maximumOffline / 100 }
    /// The maximum as given, for messages.
    let maximumOfflineTime: Duration

    /// The maximum in the largest whole unit that states it exactly: `30d`, `12h`, `45m`, `90s`.
    var maximumText: String {
        let seconds = maximumOfflineTime.components.seconds
        for (unit, size) in [("d", Int64(86_400)), ("h", 3_600), ("m", 60)]
        where seconds > 0 && seconds % size == 0
            && maximumOfflineTime.components.attoseconds == 0
        {
            return "\(seconds / size)\(unit)"
        }
        return "\(maximumOfflineTime)"
    }

    init?(_ configuration: SyncServer.Configuration) {
        guard let maximum = configuration.maximumOfflineTime else { return nil }
        store = configuration.store
        clock = configuration.clock
        maximumOfflineTime = maximum
        maximumOffline = Double(maximum.components.seconds) + Double(maximum.components.attoseconds) * 1e-18
    }
}
