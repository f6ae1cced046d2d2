import Dispatch
import PostgresSync
import SyncServer
import SyncServerCommandLine

// `sync-server-pg`: a sync-server front end whose partition logs live in PostgreSQL, shared with other
// front ends (docs/Scaling.md).
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// First: SIGINT, SIGTERM and SIGHUP (ignored) are taken over long before the URL line is printed, so
// whoever reads it may stop the front end at once; then the command line is parsed and SIGPIPE ignored.
let (options, stopSignal) = ServerOptions.start()
// Before anything else can fail for lack of descriptors: each connection needs one.
DescriptorLimit.raiseToHardLimit()
ProgramLog.configure(programName: ServerOptions.programName, json: false)
let authentication = options.authenticationOrFail()
let database = options.database!
let store: PostgresPartitionStore
do {
    // The cap is the store's too: it enforces it atomically across every front end sharing the database.
    store = try await PostgresPartitionStore.open(
        .init(url: database, maximumPartitions: options.maximumPartitionsOnDisk, logLevel: options.core.logLevel))
} catch {
    ServerOptions.fail("cannot open \(database): \(error)", status: 1)
}

var configuration = options.core.configuration(store: store, authentication: authentication)
configuration.maximumPartitionsInStore = options.maximumPartitionsOnDisk
let server: SyncServer
do {
    server = try await SyncServer.listening(
        host: options.core.host, port: options.core.port!, configuration: configuration,
        limits: options.core.webSocketLimits)
} catch {
    await store.close()
    ServerOptions.fail("cannot listen on \(options.core.host):\(options.core.port!): \(error)", status: 1)
}
guard case .webSocket(let host, let port) = server.webSocketEndpoint?.kind else {
    ServerOptions.fail("no endpoint", status: 1)
}
let url = serverURL(scheme: "ws", host: host, port: port)
FileHandleOutput.standardOutput("sync-server-pg listening on \(url) (database: \(database))\n")
if let warning = anonymousAccessWarning(
    apiKeysFile: options.core.apiKeysFile, host: host, url: url,
    maximumPartitionsOnDisk: options.maximumPartitionsOnDisk)
{
    ProgramLog.write(.warn, warning)
}

// Wait for SIGINT or SIGTERM, then stop cleanly.
await ServerOptions.exitWhenStopped(by: stopSignal) {
    await server.stop()
    await store.close()
}
