import Foundation
import SyncStreams
import SyncWire

/// The entry point: a server, a local directory, and the users logged in to it.
///
/// ```swift
/// let server = try await SyncServer.embedded()
/// let app = SyncApp(configuration: .init(server: server.endpoint, directory: directory))
/// let user = try await app.login(.anonymous)
/// let session = try await user.openSession(partition: "tasks")
/// ```
public final class SyncApp: Sendable {
    /// The configuration the app was made with.
    public let configuration: Configuration
    private let users = Locked<[SyncCredentials: SyncUser]>([:])
    private let errorSink = ErrorSink()

    public init(configuration: Configuration) { self.configuration = configuration }

    /// Every error the engine meets, with the session it concerns (`nil` for a connection shared by
    /// several sessions). Delivered on the engine's thread that met it; never finishes.
    public var errors: AnySyncStream<(error: SyncError, session: SyncSession?), Never> {
        errorSink.subject.eraseToAnyStream()
    }

    /// Logs in: returns the user for `credentials` (the same object for the same credentials). The server
    /// checks the credentials when the user's first session connects; a refusal makes the sessions
    /// `.invalid` and reaches `errors` as `.authenticationFailed`.
    ///
    /// - Throws: `.storageFailure` if the user's directory cannot be created.
    public func login(_ credentials: SyncCredentials) async throws(SyncError) -> SyncUser {
        let directory = configuration.directory.appendingPathComponent(SyncUser.identifier(for: credentials))
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw .storageFailure("cannot create \(directory.path): \(error)")
        }
        return users.withLock { users in
            if let user = users[credentials] { return user }
            let user = SyncUser(
                credentials: credentials,
                directory: directory,
                configuration: configuration,
                errorSink: errorSink
            )
            users[credentials] = user
            return user
        }
    }
}
