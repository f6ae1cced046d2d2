import Foundation

/// Every kind of fault the simulation can inject, each switchable on its own.
enum FaultKind: String, CaseIterable, Sendable, Comparable {
    /// A connection ends after a random number of further messages (either direction): a drop at any
    /// message boundary.
    case connectionDrop
    /// The server stops (closing every connection) and a new server opens the same data directory.
    case serverRestart
    /// At a server restart, each partition log ends in a torn record (bytes of a write that never
    /// completed and was never acknowledged).
    case serverTornTail
    /// An app crashes (no close): files lose what they did not fsync, connections end, the app's objects
    /// are abandoned; a new app opens the same directory.
    case appCrash
    /// At an app crash, each written file is cut at a random point of its unsynced tail.
    case appTornTail
    /// At an app crash, one sector inside a file's unsynced tail is lost while later ones landed (a group
    /// commit's pages written out of order; issue 21 item 6).
    case tornGroupCommit
    /// An app is closed cleanly and opened again (checks that every stream ends and nothing is delivered
    /// after close).
    case appRestart
    /// The next writes of an app's stores fail with `ENOSPC` (transient: the disk has room again later).
    case enospc
    /// The next fsync of an app's store fails (the store is poisoned, as designed); the app restarts soon
    /// after, as a real app would after a storage failure.
    case fsyncFailure
    /// The server's clock jumps past the maximum offline time while a client is away: the server forgets
    /// that client file and the client resets (in the app's client reset mode) when it returns.
    case clientExpiry
    /// At a server restart, the server's data directory is replaced by the copy taken at an earlier
    /// restart (a restored backup; issue 21 item 1).
    case serverRollback
    /// An app's directory is replaced by the copy taken at its previous clean restart (a client restored
    /// from a backup; issue 21 item 2).
    case clientStoreRollback
    /// The server's store fails its next writes with `ENOSPC`, or its next fsync with `EIO` (a log whose fsync
    /// failed is poisoned and reopened before its next append): the uploads it was storing are refused with
    /// a retry, never acknowledged, and sent again (transient: the disk recovers).
    case serverStorageFailure

    static func < (lhs: FaultKind, rhs: FaultKind) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Which fault kinds a run injects.
struct FaultPlan: Sendable, Hashable, CustomStringConvertible {
    var enabled: Set<FaultKind>

    /// Every fault kind.
    static let all = FaultPlan(enabled: Set(FaultKind.allCases))

    /// The fault kinds whose handling passes every invariant on this branch: what `swift test` runs.
    /// Each kind left out is there because the simulation found a bug (see docs/RELIABILITY.md) that is
    /// still open: `clientExpiry` and `clientStoreRollback` (rare findings 11 and 12 of the last soak, about
    /// one seed in a thousand: not in the default run, so that it never flakes). `serverRollback` is in
    /// since bug 10 was fixed (the bind's checkpoint), `serverStorageFailure` since it was added (stop 23:
    /// 1,200 seeds with every fault kind, no violation).
    static let passing = FaultPlan(enabled: [
        .connectionDrop, .serverRestart, .serverTornTail, .appCrash, .appTornTail, .fsyncFailure, .appRestart,
        .enospc, .tornGroupCommit, .serverRollback, .serverStorageFailure,
    ])

    func contains(_ kind: FaultKind) -> Bool { enabled.contains(kind) }

    /// `all`, `passing`, or a comma-separated list of fault kinds, optionally `passing,+kind` / `all,-kind`.
    init?(parsing text: String) {
        var enabled = Set<FaultKind>()
        for part in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            switch part {
            case "all": enabled.formUnion(FaultKind.allCases)
            case "passing": enabled.formUnion(Self.passing.enabled)
            case "none", "": break
            default:
                if part.hasPrefix("-"), let kind = FaultKind(rawValue: String(part.dropFirst())) {
                    enabled.remove(kind)
                } else if let kind = FaultKind(rawValue: part.hasPrefix("+") ? String(part.dropFirst()) : part) {
                    enabled.insert(kind)
                } else {
                    return nil
                }
            }
        }
        self.enabled = enabled
    }

    init(enabled: Set<FaultKind>) { self.enabled = enabled }

    var description: String {
        if self == .passing { return "passing" }
        if self == .all { return "all" }
        return enabled.sorted().map(\.rawValue).joined(separator: ",")
    }
}

/// Which invariant checks a run makes. Checks that fail on this branch whatever the faults (a bug another
/// branch fixes) can be left out of the default run, like fault kinds.
struct InvariantChecks: Sendable, Hashable, CustomStringConvertible {
    /// After `close()`, every session stream (`state`, `connectionState`, progress, `changesets`) finishes
    /// (issue 21 item 9).
    var streamsFinishOnClose: Bool

    static let all = InvariantChecks(streamsFinishOnClose: true)
    /// What passes on this branch: every check (the streams finish since issue 21 item 9 was merged).
    static let passing = InvariantChecks(streamsFinishOnClose: true)

    var description: String { self == .all ? "all" : "passing" }
}
