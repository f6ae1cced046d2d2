import Foundation

/// The settings of client-file tracking: on when the server has a maximum offline time.
struct ClientFileTracking: Sendable {
    let store: any PartitionStore
    /// The wall clock, corrected for jumps while the server runs (see `OfflineClock`).
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
        clock = OfflineClock(wall: configuration.clock, uptime: configuration.uptime).now
        maximumOfflineTime = maximum
        maximumOffline = Double(maximum.components.seconds) + Double(maximum.components.attoseconds) * 1e-18
    }
}
