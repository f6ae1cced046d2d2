import SyncStorage

/// What a session's client reset does and who hears of it.
struct ClientResetSettings: Sendable {
    var mode: ClientResetMode = .manual
    /// The app's handler, called on the session's callback executor with each event (the app adds the
    /// session).
    var handler: @Sendable (ClientResetEvent) -> Void = { _ in }
    /// The new client file's id.
    var newClientFileID: @Sendable () -> UInt64 = { UInt64.random(in: 1...UInt64.max) }
    /// Called once the new store is complete at its temporary path, before it is renamed into place:
    /// tests throw here to stop as a crash at that moment would (the new file stays; the session fails).
    var beforeSwap: @Sendable () throws(SyncError) -> Void = {}
    /// The system calls of the store a reset writes: the app's, like every other store's.
    var fileSystem: any FileSystem = SystemFileSystem()
}
