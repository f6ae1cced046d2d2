import Dispatch
import SyncServer

// `sync-server`: the reference sync server over WebSocket, with a durable file store.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// First, before any other thread starts (they inherit the blocked signals): SIGINT and SIGTERM are taken
// over long before the URL line is printed, so whoever reads it may stop the server at once.
let stopSignal = StopSignal.install()

func fail(_ message: String, status: Int32) -> Never {
    FileHandleOutput.standardError("sync-server: \(message)\n")
    exit(status)
}

let options: ServerOptions
do {
    options = try ServerOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandleOutput.standardError("sync-server: \(error)\n\n\(ServerOptions.usage)\n")
    exit(64)
}
if options.showHelp {
    FileHandleOutput.standardOutput(ServerOptions.usage + "\n")
    exit(0)
}

signal(SIGPIPE, SIG_IGN)
// What the server creates — its data directory, partition logs, lock — is for its own user only (0700 and
// 0600): the logs hold every client's data.
umask(0o077)
// Before anything else can fail for lack of descriptors: each connection needs one, each loaded partition two.
DescriptorLimit.raiseToHardLimit()
// Dispatch takes the descriptors it needs now, so that running out later fails our calls, not its own.
await StopSignal.prepareDispatch()
var authentication = SyncServer.Authentication.anonymousAllowed
if let path = options.apiKeysFile {
    do { authentication = .apiKeys(try APIKeysFile.load(path: path)) } catch { fail("\(error)", status: 1) }
    for warning in APIKeysFile.warnings(path: path) {
        FileHandleOutput.standardError("sync-server: warning: \(warning)\n")
    }
}
let store: FilePartitionStore
do {
    store = try FilePartitionStore(directory: options.dataDirectory!, logLevel: options.logLevel)
} catch {
    fail("\(error)", status: 1)
}

let configuration = SyncServer.Configuration(
    store: store, authentication: authentication, maximumMessageBytes: options.maximumMessageBytes,
    logLevel: options.logLevel, maximumOfflineTime: options.maximumOfflineTime)
let server: SyncServer
do {
    server = try await SyncServer.listening(
        host: options.host, port: options.port!, configuration: configuration,
        limits: WebSocketLimits(originPolicy: options.originPolicy))
} catch {
    fail("cannot listen on \(options.host):\(options.port!): \(error)", status: 1)
}
guard case .webSocket(let host, let port) = server.webSocketEndpoint?.kind else { fail("no endpoint", status: 1) }
let url = host.contains(":") ? "ws://[\(host)]:\(port)" : "ws://\(host):\(port)"
FileHandleOutput.standardOutput("sync-server listening on \(url) (data: \(options.dataDirectory!))\n")
if options.apiKeysFile == nil && !isLoopback(host) {
    FileHandleOutput.standardError(
        "sync-server: warning: anonymous access on \(host), which is not a loopback address: anyone who can reach "
            + "\(url) may read and write every partition (give --api-keys FILE, or --host 127.0.0.1)\n")
}

// Wait for SIGINT or SIGTERM, then stop cleanly.
let received = await stopSignal.wait()
FileHandleOutput.standardError("sync-server: \(received == SIGINT ? "SIGINT" : "SIGTERM"): stopping\n")
await server.stop()
await store.close()
FileHandleOutput.standardOutput("sync-server stopped\n")
exit(0)
