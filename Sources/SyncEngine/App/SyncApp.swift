import Dispatch
import Foundation
import SyncStorage
import SyncStreams
import SyncWire

/// The entry point: a server, a local directory, and the users logged in to it.
///
/// ```swift
/// let server = try await SyncServer.embedded()
/// let app = SyncApp(configuration: .init(server: server.endpoint, directory: directory))
/// let user = try await app.login(.anonymous)
/// let session = try await user.openSession(partition: "tasks")
/// // …
/// try await app.close()
/// ```
public final class SyncApp: Sendable {
    /// The configuration the app was made with.
    public let configuration: Configuration
    private let state = Locked<State>(State())
    private let errorSink: ErrorSink
    /// Where the app's own callbacks run (`errors`, `sessions`, `asyncOpen`).
    let callbackExecutor: any StreamExecutor

    private struct State: Sendable {
        var users: [SyncCredentials: SyncUser] = [:]
        /// The logged-in users, in the order they logged in.
        var order: [SyncUser] = []
        var isClosed = false
    }

    private let usersPublisher: OrderedPublisher<[SyncUser]>
    private let activity: ActivityTracker
    private let statusAggregator: StatusAggregator

    public init(configuration: Configuration) {
        self.configuration = configuration
        callbackExecutor = configuration.callbackExecutor ?? DispatchQueue(label: "SyncApp.callbacks")
        usersPublisher = OrderedPublisher([], executor: callbackExecutor)
        activity = ActivityTracker(
            sources: usersPublisher.stateStream, activity: { $0.syncActivity.eraseToAnyStream() },
            combine: SyncActivity.combined)
        statusAggregator = StatusAggregator(sources: usersPublisher.stateStream, status: { $0.status })
        errorSink = ErrorSink(
            executor: callbackExecutor, logger: SyncLogger(level: configuration.logLevel, sink: configuration.logger))
    }

    /// The engine's log events at or above `configuration.logLevel`, as they are logged, in the order
    /// `configuration.logger` gets them (on the engine's thread that logs them, or, while another thread's
    /// events are being delivered, on that thread; chain `observe(on:)` to move them). Tools that watch the
    /// log subscribe here.
    public var logs: AnySyncStream<SyncLogEvent, Never> { errorSink.logger.events }

    /// Every error the engine meets, with the session it concerns (`nil` for a connection shared by
    /// several sessions). Delivered on the app's callback executor; finishes when the app closes.
    public var errors: AnySyncStream<(error: SyncError, session: SyncSession?), Never> {
        errorSink.subject.eraseToAnyStream()
    }

    /// Logs in: returns the user for `credentials` (the same object for the same credentials until it logs
    /// out). The server checks the credentials when the user's first session connects; a refusal makes the
    /// sessions `.invalid` and reaches `errors` as `.authenticationFailed`.
    ///
    /// - Throws: `.appClosed` after `close()`; `.storageFailure` if the user's directory cannot be created.
    public func login(_ credentials: SyncCredentials) async throws(SyncError) -> SyncUser {
        if state.withLock({ $0.isClosed }) { throw .appClosed }
        let directory = configuration.directory.appendingPathComponent(SyncUser.identifier(for: credentials))
        let fileSystem = configuration.fileSystem
        try await BlockingQueue.engine.run { () throws(SyncError) in
            // Each directory created is fsynced into its parent, so a store file in it survives a crash.
            if let (path, code) = DurableRename.createDirectories(directory.path, fileSystem: fileSystem) {
                throw .storageFailure("cannot create \(directory.path): \(path): errno \(code)")
            }
            LocalFiles.sweep(directory)
        }
        let user = state.withLock { state -> SyncUser? in
            guard !state.isClosed else { return nil }
            if let user = state.users[credentials] { return user }
            let user = SyncUser(
                credentials: credentials,
                directory: directory,
                configuration: configuration,
                callbackExecutor: callbackExecutor,
                errorSink: errorSink,
                onLogOut: { [weak self] user in self?.forget(user) }
            )
            state.users[credentials] = user
            state.order.append(user)
            usersPublisher.enqueue(state.order)
            return user
        }
        guard let user else { throw .appClosed }
        usersPublisher.drain()
        return user
    }

    /// The user that logged in last and has not logged out, if any.
    public var currentUser: SyncUser? { state.withLock { $0.order.last } }

    /// The logged-in users, in the order they logged in. A user leaves the list when it logs out.
    public var allUsers: [SyncUser] { state.withLock { $0.order } }

    /// "Am I synced?" over every session of every logged-in user: `.offline` when no session is
    /// connected, `.synced` when every connected session moved everything, `.syncing` otherwise, with the
    /// counts added up. See `SyncActivity` and `SyncUser.syncActivity`.
    public var syncActivity: StateStream<SyncActivity> { activity.state }

    /// The status of every session of every logged-in user together (see `SyncStatus` and
    /// `SyncUser.status`). The current value at once, then each change; after `close()`, a final `.closed`
    /// snapshot, then it finishes.
    public var status: StateStream<SyncStatus> { statusAggregator.state }

    /// Deletes the local store of `user`'s session for `partition`, so that opening it again downloads
    /// everything afresh (with a new client file id) and uploads nothing it held.
    ///
    /// The file is first renamed aside, one atomic step, then deleted: a crash leaves either the whole
    /// store or none of it (a leftover is swept when the user logs in again).
    ///
    /// While it runs, `user.openSession(partition:)` fails with `.storeInUse` rather than open the store
    /// being deleted, and the store's lock is held until it is renamed aside, so no other app opens it
    /// either.
    ///
    /// - Throws: `.storeInUse` while the session is open in this app (a session stays open until the user
    ///   logs out), the store is locked by another app, or another deletion of it runs; `.storageFailure` if
    ///   the file cannot be deleted; `.invalidArgument` for an empty partition name.
    public func deleteLocalFiles(for user: SyncUser, partition: String) async throws(SyncError) {
        guard !partition.isEmpty else { throw .invalidArgument("a partition name must not be empty") }
        try await user.deleteLocalFiles(partition: partition)
    }

    /// Every session of every user tries to reconnect at once, with a fresh backoff — what an app does when
    /// the device's network comes back (Realm's `syncManager.reconnect()`). No effect on sessions that are
    /// connected, connecting, inactive or in a fatal state. Returns at once; the attempts happen on the
    /// engine's actors.
    public func reconnect() {
        Task { await reconnectAll() }
    }

    /// `reconnect()`, returning once every connection has acted on it.
    func reconnectAll() async {
        let users = state.withLock { Array($0.users.values) }
        await withTaskGroup(of: Void.self) { group in
            for user in users { group.addTask { await user.reconnect() } }
        }
    }

    /// Closes the app: every session of every user stops (changes not uploaded yet stay on disk for the
    /// next time), connections close, store files are unlocked and closed, `errors` finishes, and
    /// everything is released. Later calls on the app, its users and its sessions throw `.appClosed` or do
    /// nothing. Calling it again does nothing.
    ///
    /// - Throws: Nothing today: what fails while closing (a final write) is reported on `errors` first. The
    ///   signature leaves room for closes that must report to their caller.
    public func close() async throws(SyncError) {
        let users = state.withLock { state -> [SyncUser]? in
            guard !state.isClosed else { return nil }
            state.isClosed = true
            defer {
                state.users = [:]
                state.order = []
                usersPublisher.enqueue([])
            }
            return state.order
        }
        guard let users else { return }
        usersPublisher.drain()
        for user in users { await user.logOut() }
        activity.stop(at: .offline)
        statusAggregator.finish()
        errorSink.finish()
    }

    /// Forgets a user that logged out, so that a later `login` starts afresh.
    private func forget(_ user: SyncUser) {
        let changed = state.withLock { state -> Bool in
            guard state.users[user.credentials] === user else { return false }
            state.users[user.credentials] = nil
            state.order.removeAll { $0 === user }
            usersPublisher.enqueue(state.order)
            return true
        }
        if changed { usersPublisher.drain() }
    }
}

extension BlockingQueue {
    /// The engine's queue for one-off blocking file work (opening stores, deleting local files).
    static let engine = BlockingQueue(label: "SyncEngine.blocking", concurrent: true)
}
