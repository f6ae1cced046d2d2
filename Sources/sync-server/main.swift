import Dispatch
import Foundation
import SyncServer
import SyncServerCommandLine
import Synchronization

// `sync-server`: the reference sync server over WebSocket, with a durable file store.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// First, before any other thread starts (they inherit the blocked signals): SIGINT and SIGTERM are taken
// over long before the URL line is printed, so whoever reads it may stop the server at once. Then the command
// line is parsed (bad usage exits 64, --help 0) and SIGPIPE ignored.
let (options, stopSignal) = ServerOptions.start()

func fail(_ message: String, status: Int32) -> Never {
    ProgramLog.write(.fatal, message)
    exit(status)
}

// What the server creates — its data directory, partition logs, lock — is for its own user only (0700 and
// 0600): the logs hold every client's data.
umask(0o077)
// Before anything else can fail for lack of descriptors: each connection needs one, each loaded partition two.
DescriptorLimit.raiseToHardLimit()
// Dispatch takes the descriptors it needs now, so that running out later fails our calls, not its own.
await StopSignal.prepareDispatch()
ProgramLog.configure(programName: ServerOptions.programName, json: options.operations.logFormat == .json)
let logSink = options.operations.logFormat == .json ? JSONLogLine.sink : nil
let logLine: @Sendable (SyncLogLevel, String) -> Void = { ProgramLog.write($0, $1) }
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

var configuration = options.core.configuration(store: store, authentication: authentication, logger: logSink)
configuration.maximumPartitionsInStore = options.operations.maximumPartitionsOnDisk
let limits = options.core.webSocketLimits
let server: SyncServer
do {
    server = try await SyncServer.listening(
        host: options.core.host, port: options.core.port!, configuration: configuration, limits: limits)
} catch {
    fail("cannot listen on \(options.core.host):\(options.core.port!): \(error)", status: 1)
}
var metricsURL: String?
if let metricsPort = options.operations.metricsPort {
    do {
        let port = try await server.serveMetrics(host: options.core.host, port: metricsPort)
        metricsURL = serverURL(scheme: "http", host: options.core.host, port: port)
    } catch {
        fail("cannot listen for metrics on \(options.core.host):\(metricsPort): \(error)", status: 1)
    }
}
// SIGHUP from now on reloads the keys file.
stopSignal.onHangUp { reloadKeys(server: server, path: options.core.apiKeysFile, log: logLine) }
guard case .webSocket(let host, let port) = server.webSocketEndpoint?.kind else { fail("no endpoint", status: 1) }
let url = serverURL(scheme: "ws", host: host, port: port)
FileHandleOutput.standardOutput(
    "sync-server listening on \(url) (data: \(options.dataDirectory!)\(metricsURL.map { "; metrics: \($0)/metrics" } ?? ""))\n"
)
if let warning = anonymousAccessWarning(
    apiKeysFile: options.core.apiKeysFile, host: host, url: url,
    maximumPartitionsOnDisk: options.operations.maximumPartitionsOnDisk)
{
    ProgramLog.write(.warn, warning)
}

// Wait for SIGINT or SIGTERM, drain if asked, then stop cleanly.
await ServerOptions.exitWhenStopped(by: stopSignal, draining: server, for: options.operations.drainTimeout) {
    await server.stop()
    await store.close()
}
