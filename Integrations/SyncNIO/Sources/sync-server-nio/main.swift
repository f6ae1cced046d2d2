import Dispatch
import NIOCore
import SyncNIO
import SyncServer

// `sync-server-nio`: the reference server's core on swift-nio, with TLS (`wss://`) from --tls-cert and
// --tls-key; the same file store as `sync-server`.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// First: SIGINT and SIGTERM are taken over long before the URL line is printed, so whoever reads it may
// stop the server at once.
let stopSignal = StopSignal.install()

func fail(_ message: String, status: Int32) -> Never {
    FileHandleOutput.standardError("sync-server-nio: \(message)\n")
    exit(status)
}

let options: ServerOptions
do {
    options = try ServerOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandleOutput.standardError("sync-server-nio: \(error)\n\n\(ServerOptions.usage)\n")
    exit(64)
}
if options.showHelp {
    FileHandleOutput.standardOutput(ServerOptions.usage + "\n")
    exit(0)
}

signal(SIGPIPE, SIG_IGN)
// The data directory and logs are for this user only (0700 and 0600): the logs hold every client's data.
umask(0o077)
var authentication = SyncServer.Authentication.anonymousAllowed
if let path = options.apiKeysFile {
    do { authentication = .apiKeys(try APIKeysFile.load(path: path)) } catch { fail("\(error)", status: 1) }
}
let store: FilePartitionStore
do {
    store = try FilePartitionStore(directory: options.dataDirectory!, logLevel: options.logLevel)
} catch {
    fail("\(error)", status: 1)
}
let configuration = SyncServer.Configuration(
    store: store, authentication: authentication, maximumMessageBytes: options.maximumMessageBytes,
    maximumSessionsPerConnection: options.maximumSessionsPerConnection, maximumPartitions: options.maximumPartitions,
    maximumIdlePartitions: options.maximumIdlePartitions, maximumConnections: options.maximumConnections,
    logLevel: options.logLevel, maximumOfflineTime: options.maximumOfflineTime)
let tls = options.tlsCertificateFile.map {
    NIOSyncServer.TLSIdentity(certificateChainFile: $0, privateKeyFile: options.tlsKeyFile!)
}
let frontEnd: NIOSyncServer
do {
    let server = try await SyncServer.embedded(configuration: configuration)
    frontEnd = try await NIOSyncServer.start(
        serving: server, host: options.host, port: options.port!, tls: tls, path: options.path,
        originPolicy: options.originPolicy(anonymous: options.apiKeysFile == nil),
        maximumMessageBytes: options.maximumMessageBytes,
        handshakeTimeout: .seconds(options.handshakeTimeout.components.seconds),
        idleTimeout: .seconds(options.idleTimeout.components.seconds),
        maximumUnauthenticatedMessageBytes: configuration.maximumCredentialBytes + 1024)
} catch {
    await store.close()
    fail("cannot serve on \(options.host):\(options.port!): \(error)", status: 1)
}
FileHandleOutput.standardOutput("sync-server-nio listening on \(frontEnd.url) (data: \(options.dataDirectory!))\n")

// Wait for SIGINT or SIGTERM, then stop cleanly.
let received = await stopSignal.wait()
FileHandleOutput.standardError("sync-server-nio: \(received == SIGINT ? "SIGINT" : "SIGTERM"): stopping\n")
await frontEnd.stop()
await store.close()
FileHandleOutput.standardOutput("sync-server-nio stopped\n")
exit(0)
