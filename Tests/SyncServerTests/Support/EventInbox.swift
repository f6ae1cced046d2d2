import SyncWire

/// The events a test client's connection reported, in order, with a read position.
actor EventInbox {
    private var events: [SyncTransportEvent] = []
    private var position = 0
    private(set) var isFinished = false

    func record(_ event: SyncTransportEvent) { events.append(event) }
    func finish() { isFinished = true }

    /// The next unread event, if any, consumed.
    func take() -> SyncTransportEvent? {
        guard position < events.count else { return nil }
        defer { position += 1 }
        return events[position]
    }

    /// Every event so far, read or not.
    var all: [SyncTransportEvent] { events }
}
