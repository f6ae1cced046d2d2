/// The categories the engine logs under.
enum LogCategory {
    static let connection = "sync.client.connection"
    static let session = "sync.client.session"
    static let store = "sync.client.store"
    static let errors = "sync.client.error"
}
