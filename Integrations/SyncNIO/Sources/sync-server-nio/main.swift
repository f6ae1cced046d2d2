import Dispatch
import NIOCore
import SyncNIO
import SyncServer
import SyncServerCommandLine

// `sync-server-nio`: the reference server's core on swift-nio, with TLS (`wss://`) from --tls-cert and
// --tls-key; the same file store as `sync-server`.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// First: SIGINT, SIGTERM and SIGHUP (ignored) are taken over long before the URL line is printed, so
// whoever reads it may stop the server at once; then the command line is parsed and SIGPIPE ignored.
let (options, stopSignal) = ServerOptions.start()
// The data directory and logs are for this user only (0700 and 0600): the logs hold every client's data.
umask(0o077)
let authentication = options.authenticationOrFail()
let store: FilePartitionStore
do {
    store = try FilePartitionStore(directory: options.dataDirectory!, logLevel: options.core.logLevel)
} catch {
    ServerOptions.fail("\(error)", status: 1)
}
let configuration = options.core.configuration(store: store, authentication: authentication)
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
        maximumUnauthenticatedMessageBytes: configuration.maximumCredentialBytes + 1024)
} catch {
    await store.close()
    ServerOptions.fail("cannot serve on \(options.core.host):\(options.core.port!): \(error)", status: 1)
}
FileHandleOutput.standardOutput("sync-server-nio listening on \(frontEnd.url) (data: \(options.dataDirectory!))\n")

// Wait for SIGINT or SIGTERM, then stop cleanly.
await ServerOptions.exitWhenStopped(by: stopSignal) {
    await frontEnd.stop()
    await store.close()
}
