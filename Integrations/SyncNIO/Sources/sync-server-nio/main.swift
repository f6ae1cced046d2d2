import Dispatch
import NIOCore
import SyncNIO
import SyncServer
import SyncServerCommandLine

// `sync-server-nio`: the reference server's core on swift-nio, with TLS (`wss://`) from --tls-cert and
// --tls-key; the same file store and the same operator options as `sync-server` (metrics, health, JSON
// logs, the drain, SIGHUP reloading the keys file), shared through `SyncServerCommandLine`.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// First: SIGINT, SIGTERM and SIGHUP are taken over long before the URL line is printed, so whoever reads
// it may stop the server at once; then the command line is parsed and SIGPIPE ignored.
let (options, stopSignal) = ServerOptions.start()

func fail(_ message: String, status: Int32) -> Never {
    ProgramLog.write(.fatal, message)
    JSONLogLine.flush()
    exit(status)
}

// The data directory and logs are for this user only (0700 and 0600): the logs hold every client's data.
umask(0o077)
// Before anything else can fail for lack of descriptors: each connection needs one, each loaded partition two.
DescriptorLimit.raiseToHardLimit()
let json = options.operations.logFormat == .json
ProgramLog.configure(programName: ServerOptions.programName, json: json)
let authentication: SyncServer.Authentication
do { authentication = try options.core.authentication() } catch { fail("\(error)", status: 1) }
if let path = options.core.apiKeysFile {
    for warning in APIKeysFile.warnings(path: path) {
        ProgramLog.write(.warn, warning)
    }
}
let store: FilePartitionStore
do {
    store = try FilePartitionStore(directory: options.dataDirectory!, logLevel: options.core.logLevel)
} catch {
    fail("\(error)", status: 1)
}
var configuration = options.core.configuration(
    store: store, authentication: authentication, logger: json ? JSONLogLine.sink : nil)
configuration.maximumPartitionsInStore = options.operations.maximumPartitionsOnDisk
let tls = options.tlsCertificateFile.map {
    NIOSyncServer.TLSIdentity(certificateChainFile: $0, privateKeyFile: options.tlsKeyFile!)
}
let frontEnd: NIOSyncServer
do {
    let server = try await SyncServer.embedded(configuration: configuration)
    frontEnd = try await NIOSyncServer.start(
        serving: server, host: options.core.host, port: options.core.port!, tls: tls, path: options.path,
        originPolicy: options.core.originPolicy(anonymous: options.core.apiKeysFile == nil),
        maximumMessageBytes: options.core.maximumMessageBytes,
        handshakeTimeout: .seconds(options.core.handshakeTimeout.components.seconds),
        idleTimeout: .seconds(options.core.idleTimeout.components.seconds),
        helloTimeout: .seconds(options.core.helloTimeout.components.seconds),
        maximumUnauthenticatedMessageBytes: configuration.maximumCredentialBytes + 1024,
        maximumHandshakingConnections: options.core.maximumHandshakingConnections)
} catch {
    await store.close()
    fail("cannot serve on \(options.core.host):\(options.core.port!): \(error)", status: 1)
}
var metricsURL: String?
if let metricsPort = options.operations.metricsPort {
    do {
        let port = try await frontEnd.serveMetrics(host: options.core.host, port: metricsPort)
        metricsURL = serverURL(scheme: "http", host: options.core.host, port: port)
    } catch {
        await frontEnd.stop()
        await store.close()
        fail("cannot listen for metrics on \(options.core.host):\(metricsPort): \(error)", status: 1)
    }
}
// SIGHUP from now on reloads the keys file.
stopSignal.onHangUp {
    reloadKeys(server: frontEnd.server, path: options.core.apiKeysFile, log: { ProgramLog.write($0, $1) })
}
FileHandleOutput.standardOutput(
    "sync-server-nio listening on \(frontEnd.url) (data: \(options.dataDirectory!)"
        + "\(metricsURL.map { "; metrics: \($0)/metrics" } ?? ""))\n")
if let warning = anonymousAccessWarning(
    apiKeysFile: options.core.apiKeysFile, host: frontEnd.host, url: frontEnd.url,
    maximumPartitionsOnDisk: options.operations.maximumPartitionsOnDisk)
{
    ProgramLog.write(.warn, warning)
}

// Wait for SIGINT or SIGTERM, drain if asked, then stop cleanly.
await ServerOptions.exitWhenStopped(
    by: stopSignal, draining: frontEnd.server, for: options.operations.drainTimeout
) {
    await frontEnd.stop()
    await store.close()
}
