import Foundation
import SyncStreams

@testable import SyncEngine

/// Everything one session (of one app incarnation) delivers, checked as it arrives: changesets in order
/// and never twice, progress that never goes back, nothing after close. Violations go to `report`.
final class SessionObserver: Sendable {
    /// Where the session stands for the checks.
    enum Phase: Sendable { case live, closed, abandoned }

    /// One `.forCurrentlyOutstandingWork` registration's values.
    struct Outstanding: Sendable {
        let direction: ProgressDirection
        var values: [SyncProgress] = []
        var finished = false
    }

    private struct State {
        var phase = Phase.live
        var changesets: [UInt64: Data] = [:]
        var lastVersion: UInt64 = 0
        var resets = 0
        var lastProgress: [ProgressDirection: SyncProgress] = [:]
        var outstanding: [Outstanding] = []
        /// Streams still open, by name (subscribed and not yet finished).
        var open: Set<String> = []
        var tokens: [SubscriptionToken] = []
    }

    let name: String
    let partition: Int
    let session: SyncSession
    private let report: @Sendable (String) -> Void
    private let state = Locked(State())

    init(
        name: String, partition: Int, session: SyncSession, report: @escaping @Sendable (String) -> Void,
        resetEvent: @escaping @Sendable (ClientResetEvent) -> Void = { _ in }
    ) {
        self.name = name
        self.partition = partition
        self.session = session
        self.report = report
        // Resets are counted whatever the phase: one that completes as the app crashes still dropped (in
        // the discard mode) what it dropped.
        //
        // After a `historyLost` reset the server's log is another history, whose versions name other
        // changesets (or the same ones again): by design (`ChangesetFeed`, issue 21 item 5) the feed then
        // delivers the new log from its first version, none of it skipped. What was delivered of the old
        // history is forgotten here, so "delivered twice" and "two different changesets for one version"
        // are checked within each history, and the end state must still hold the whole new log, byte for
        // byte (a feed that skipped part of it would not converge). The `didReset` event comes before any
        // changeset of the new history: the session binds again only after announcing it.
        let resetToken = session.clientResets.subscribe(
            onValue: { [weak self] event in
                resetEvent(event)
                guard case .didReset(let reset) = event else { return }
                self?.state.withLock { state in
                    state.resets += 1
                    if reset.reason == .historyLost {
                        state.changesets = [:]
                        state.lastVersion = 0
                    }
                }
            }, onCompletion: { _ in })
        state.withLock { $0.tokens.append(resetToken) }
        // The resets first: a reset that completes while these subscribe (the session binds as soon as it is
        // open) must not be missed after the feed delivered the old history (seed 882: "changeset 1
        // delivered twice" with no reset seen).
        watch("changesets", session.changesets) { observer, changeset in observer.received(changeset) }
        watch("state", session.state) { _, _ in }
        watch("connectionState", session.connectionState) { _, _ in }
        watch("clientResets", session.clientResets) { _, _ in }
        for direction in ProgressDirection.allCases {
            watch("progress(\(direction))", session.progress(for: direction, mode: .reportIndefinitely)) {
                observer, progress in observer.progressed(direction, progress)
            }
        }
    }

    /// Subscribes to `stream` under `streamName`: values go to `handle` while the session is live; a value
    /// after close is a violation; the completion is noted.
    private func watch<S: SyncStream>(
        _ streamName: String, _ stream: S, handle: @escaping @Sendable (SessionObserver, S.Output) -> Void
    ) {
        state.withLock { _ = $0.open.insert(streamName) }
        let token = stream.subscribe(
            onValue: { [weak self] value in
                guard let self else { return }
                switch self.state.withLock({ $0.phase }) {
                case .live: handle(self, value)
                case .closed: self.report("\(self.name): \(streamName) delivered \(value) after close() returned")
                case .abandoned: break
                }
            },
            onCompletion: { [weak self] _ in self?.state.withLock { _ = $0.open.remove(streamName) } }
        )
        state.withLock { $0.tokens.append(token) }
    }

    private func received(_ changeset: Changeset) {
        let problem = state.withLock { state -> String? in
            if let seen = state.changesets[changeset.serverVersion] {
                return seen == changeset.data
                    ? "changeset \(changeset.serverVersion) delivered twice"
                    : "two different changesets delivered as version \(changeset.serverVersion)"
            }
            defer {
                state.changesets[changeset.serverVersion] = changeset.data
                state.lastVersion = max(state.lastVersion, changeset.serverVersion)
            }
            return changeset.serverVersion != state.lastVersion + 1 && state.resets == 0
                ? "changeset \(changeset.serverVersion) delivered after \(state.lastVersion)" : nil
        }
        if let problem { report("\(name): \(problem)") }
    }

    private func progressed(_ direction: ProgressDirection, _ progress: SyncProgress) {
        let problem = state.withLock { state -> String? in
            defer { state.lastProgress[direction] = progress }
            guard let last = state.lastProgress[direction] else { return nil }
            if progress.transferredBytes < last.transferredBytes {
                return "\(direction) progress went back from \(last) to \(progress)"
            }
            // The estimate may drop when more work arrives (transferrable grows), never with the same work.
            if progress.progressEstimate < last.progressEstimate && last.progressEstimate < 1
                && progress.transferrableBytes == last.transferrableBytes
            {
                return "\(direction) estimate went back from \(last) to \(progress) before reaching 1"
            }
            if progress.transferredBytes > progress.transferrableBytes {
                return "\(direction) progress \(progress) has transferred above transferrable"
            }
            return nil
        }
        if let problem { report("\(name): \(problem)") }
    }

    /// Registers a `.forCurrentlyOutstandingWork` stream and checks it as it goes.
    func registerOutstanding(_ direction: ProgressDirection) {
        let index = state.withLock { state -> Int in
            state.outstanding.append(Outstanding(direction: direction))
            return state.outstanding.count - 1
        }
        let streamName = "outstanding(\(direction))#\(index)"
        state.withLock { _ = $0.open.insert(streamName) }
        let token = session.progress(for: direction, mode: .forCurrentlyOutstandingWork).subscribe(
            onValue: { [weak self] progress in
                guard let self else { return }
                let (phase, problem) = self.state.withLock { state -> (Phase, String?) in
                    let last = state.outstanding[index].values.last
                    state.outstanding[index].values.append(progress)
                    guard state.phase == .live else { return (state.phase, nil) }
                    if state.outstanding[index].finished { return (.live, "\(streamName) delivered after its end") }
                    if let last, progress.progressEstimate < last.progressEstimate {
                        return (.live, "\(streamName) went back from \(last) to \(progress)")
                    }
                    return (.live, nil)
                }
                if phase == .closed { self.report("\(self.name): \(streamName) delivered \(progress) after close") }
                if let problem { self.report("\(self.name): \(problem)") }
            },
            onCompletion: { [weak self] _ in
                self?.state.withLock { state in
                    state.outstanding[index].finished = true
                    state.open.remove(streamName)
                }
            }
        )
        state.withLock { $0.tokens.append(token) }
    }

    // MARK: What the checks read

    var phase: Phase { state.withLock { $0.phase } }
    var changesets: [UInt64: Data] { state.withLock { $0.changesets } }
    var resets: Int { state.withLock { $0.resets } }
    var outstanding: [Outstanding] { state.withLock { $0.outstanding } }
    var openStreams: Set<String> { state.withLock { $0.open } }

    /// `close()` returned: from now on any delivery is a violation.
    func closed() { state.withLock { $0.phase = .closed } }

    /// The app crashed: nothing this session delivers any more is checked (but its resets are counted).
    func abandon() {
        state.withLock { $0.phase = .abandoned }
    }
}
