/// What one progress direction's subject carries to its subscribers.
enum ProgressEvent: Sendable, Equatable {
    /// A new report.
    case report(SyncProgress)
    /// The report `after` went stale (the session's binding ended): a registration made now waits for the
    /// next report instead of capturing `after`. A subscriber that already delivered `after` skips the next
    /// report if it is the same (nothing changed for it); a newer subscriber delivers it.
    case stale(after: SyncProgress)
}
