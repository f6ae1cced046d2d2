import Foundation
import SyncStreams
import SyncWire

/// A logged-in user: opens sessions, one per partition, and lists them.
public final class SyncUser: Sendable {
    /// A stable identifier derived from the credentials; also the name of the user's local directory.
    public let identifier: String
    let credentials: SyncCredentials
    let directory: URL
    let configuration: SyncApp.Configuration
    private let errorSink: ErrorSink
    private let registry = Locked<Registry>(Registry())
    private let sessionsPublisher = OrderedPublisher<[SyncSession]>([])

    private struct Registry {
        var sessions: [String: SyncSession] = [:]
        var order: [SyncSession] = []
        var sharedConnection: ServerConnection?
    }

    init(credentials: SyncCredentials, directory: URL, configuration: SyncApp.Configuration, errorSink: ErrorSink) {
        self.identifier = Self.identifier(for: credentials)
        self.credentials = credentials
        self.directory = directory
        self.configuration = configuration
        self.errorSink = errorSink
    }

    /// Every session opened, in the order they were opened.
    public var allSessions: [SyncSession] { registry.withLock { $0.order } }

    /// The session for `partition`, if one was opened.
    public func session(for partition: String) -> SyncSession? { registry.withLock { $0.sessions[partition] } }

    /// The user's sessions as a state: the current list at once, then each change.
    public var sessions: StateStream<[SyncSession]> { StateStream(sessionsPublisher.subject) }

    /// Opens (or returns the already open) session for `partition` and starts syncing it.
    ///
    /// Opening reads the partition's local store: what was written before and not acknowledged is
    /// uploaded again, and what was downloaded before is not downloaded again.
    ///
    /// - Throws: `.invalidArgument` for an empty partition name; `.storageFailure` if the local store
    ///   cannot be opened.
    public func openSession(partition: String) async throws(SyncError) -> SyncSession {
        guard !partition.isEmpty else { throw .invalidArgument("a partition name must not be empty") }
        let opened = registry.withLock { registry -> Result<(SyncSession, Bool), SyncError> in
            if let existing = registry.sessions[partition] { return .success((existing, false)) }
            return Result { () throws(SyncError) in try makeSession(partition: partition, registry: &registry) }
                .map { session in
                    registry.sessions[partition] = session
                    registry.order.append(session)
                    sessionsPublisher.enqueue(registry.order)
                    return (session, true)
                }
        }
        let (session, isNew) = try opened.get()
        if isNew {
            sessionsPublisher.drain()
            await session.engine.reconcile()
        }
        return session
    }

    /// Opens the session for `partition` and reports the initial download: `.connecting`, then
    /// `.progress` values (`.forCurrentlyOutstandingWork`), then `.open(session)` once everything the
    /// server had is downloaded, and finishes; or `.error` and finishes. Invalidating the token stops
    /// waiting (the session stays open).
    public func asyncOpen(partition: String) -> AnySyncStream<AsyncOpenState, Never> {
        AnySyncStream { onValue, onCompletion in
            let output = PassthroughSubject<AsyncOpenState, Never>()
            let outputToken = output.subscribe(onValue: onValue, onCompletion: onCompletion)
            let task = Task {
                output.send(.connecting)
                do throws(SyncError) {
                    let session = try await self.openSession(partition: partition)
                    let progressToken = session.engine.notifier
                        .progress(for: .download, mode: .forCurrentlyOutstandingWork)
                        .subscribe { output.send(.progress($0)) }
                    defer { progressToken.invalidate() }
                    try await session.wait(for: .download)
                    progressToken.invalidate()
                    output.send(.open(session))
                } catch {
                    if error != .cancelled { output.send(.error(error)) }
                }
                output.send(completion: .finished)
            }
            return SubscriptionToken {
                task.cancel()
                outputToken.invalidate()
            }
        }
    }

    private func makeSession(partition: String, registry: inout Registry) throws(SyncError) -> SyncSession {
        let path = directory.appendingPathComponent(Self.fileName(for: partition)).path
        let store = try LocalStore(path: path, newClientFileID: { UInt64.random(in: 1...UInt64.max) })
        let connection: ServerConnection
        switch configuration.connectionSharing {
        case .perUser:
            if let shared = registry.sharedConnection {
                connection = shared
            } else {
                connection = makeConnection()
                registry.sharedConnection = connection
            }
        case .perSession:
            connection = makeConnection()
        }
        let sessionReference = WeakReference<SyncSession>()
        let engineReference = WeakReference<SessionEngine>()
        let controller = SessionController(stopPolicy: configuration.stopPolicy) {
            guard let engine = engineReference.object else { return }
            Task { await engine.reconcile() }
        }
        let errorSink = errorSink
        let engine = SessionEngine(
            partition: partition,
            store: store,
            connection: connection,
            controller: controller,
            reportError: { errorSink.report($0, session: sessionReference.object) }
        )
        engineReference.object = engine
        let session = SyncSession(
            partition: partition, engine: engine, callbackExecutor: configuration.callbackExecutor)
        sessionReference.object = session
        return session
    }

    private func makeConnection() -> ServerConnection {
        let errorSink = errorSink
        let credential: WireCredential =
            switch credentials {
            case .anonymous: .anonymous
            case .apiKey(let key): .apiKey(key)
            }
        return ServerConnection(
            settings: ServerConnection.Settings(
                endpoint: configuration.server,
                transport: configuration.transport,
                credential: credential,
                backoff: configuration.backoff,
                connectTimeout: configuration.connectTimeout,
                pingInterval: configuration.pingInterval,
                pongTimeout: configuration.pongTimeout,
                executor: configuration.timerExecutor,
                random: configuration.random,
                reportError: { errorSink.report($0, session: nil) }
            )
        )
    }

    /// `"anonymous"`, or `"apikey-"` and a hash of the key (the key itself never reaches the disk).
    static func identifier(for credentials: SyncCredentials) -> String {
        switch credentials {
        case .anonymous:
            return "anonymous"
        case .apiKey(let key):
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a
            for byte in key.utf8 {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01b3
            }
            return "apikey-" + String(hash, radix: 16)
        }
    }

    /// A file name for `partition`: letters, digits, `-`, `_` and `.` as they are, every other byte as `%XX`.
    static func fileName(for partition: String) -> String {
        var name = ""
        for byte in partition.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                name.append(Character(Unicode.Scalar(byte)))
            case UInt8(ascii: ".") where !name.isEmpty:
                name.append(".")
            default:
                name += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return name + ".synclog"
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
