import Dispatch
import PostgresSync
import SyncServer

// `sync-server-pg`: a sync-server front end whose partition logs live in PostgreSQL, shared with other
// front ends (docs/Scaling.md).
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// First: SIGINT and SIGTERM are taken over long before the URL line is printed, so whoever reads it may
// stop the front end at once.
let stopSignal = StopSignal.install()

func fail(_ message: String, status: Int32) -> Never {
    FileHandleOutput.standardError("sync-server-pg: \(message)\n")
    exit(status)
}

let options: ServerOptions
do {
    options = try ServerOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandleOutput.standardError("sync-server-pg: \(error)\n\n\(ServerOptions.usage)\n")
    exit(64)
}
if options.showHelp {
    FileHandleOutput.standardOutput(ServerOptions.usage + "\n")
    exit(0)
}

signal(SIGPIPE, SIG_IGN)
var authentication = SyncServer.Authentication.anonymousAllowed
if let path = options.apiKeysFile {
    do { authentication = .apiKeys(try APIKeysFile.load(path: path)) } catch { fail("\(error)", status: 1) }
}
let database = options.database!
let store: PostgresPartitionStore
do {
    store = try await PostgresPartitionStore.open(.init(url: database, logLevel: options.logLevel))
} catch {
    fail("cannot open \(database): \(error)", status: 1)
}

let configuration = SyncServer.Configuration(
    store: store, authentication: authentication, maximumMessageBytes: options.maximumMessageBytes,
    logLevel: options.logLevel)
let server: SyncServer
do {
    server = try await SyncServer.listening(host: options.host, port: options.port!, configuration: configuration)
} catch {
    await store.close()
    fail("cannot listen on \(options.host):\(options.port!): \(error)", status: 1)
}
guard case .webSocket(let host, let port) = server.webSocketEndpoint?.kind else { fail("no endpoint", status: 1) }
let url = host.contains(":") ? "ws://[\(host)]:\(port)" : "ws://\(host):\(port)"
FileHandleOutput.standardOutput("sync-server-pg listening on \(url) (database: \(database))\n")

// Wait for SIGINT or SIGTERM, then stop cleanly.
let received = await stopSignal.wait()
FileHandleOutput.standardError("sync-server-pg: \(received == SIGINT ? "SIGINT" : "SIGTERM"): stopping\n")
await server.stop()
await store.close()
FileHandleOutput.standardOutput("sync-server-pg stopped\n")
exit(0)
