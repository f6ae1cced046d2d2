import SyncNetwork
import SyncWire
import Synchronization

/// What a `SyncServer` counts for operators, rendered in the Prometheus text exposition format
/// (version 0.0.4) at `GET /metrics`.
///
/// Every count is a relaxed atomic add where the event happens (the core's actor, the registry, the
/// listener's loop); a scrape only loads them. Gauges kept by the core (sessions, partitions) are stored
/// after each change.
package final class ServerMetrics: Sendable {
    /// Connections the server took (after the upgrade), since start.
    let connectionsAccepted = Atomic<Int>(0)
    /// Upgrade requests refused because `maximumConnections` were open.
    let refusedConnectionLimit = Atomic<Int>(0)
    /// Upgrade requests refused because the server is stopping.
    let refusedStopping = Atomic<Int>(0)
    /// Sessions bound now.
    let sessionsBound = Atomic<Int>(0)
    /// Partitions in memory now (bound, in use, or idle and kept loaded).
    let partitionsLoaded = Atomic<Int>(0)
    /// Upload messages whose changesets were integrated, and those changesets.
    let uploads = Atomic<Int>(0)
    let changesetsUploaded = Atomic<Int>(0)
    /// `clientResetRequired` refusals sent (a bind or an upload that needs the client to reset).
    let clientResets = Atomic<Int>(0)
    /// Set once the server began to stop: `/healthz` then answers `503`.
    let isStopping = Atomic<Bool>(false)

    /// The listener's counts (bytes, refusals before the upgrade); its own for an embedded server.
    let network: ListenerCounters
    /// The store's fsync latencies, for a `FilePartitionStore`.
    let syncLatency: LatencyHistogram?

    init(network: ListenerCounters, syncLatency: LatencyHistogram?) {
        self.network = network
        self.syncLatency = syncLatency
    }

    /// The metrics page; `openConnections` is the gauge of connections open now.
    func prometheusText(openConnections: Int) -> String {
        var lines: [String] = []
        func metric(_ name: String, _ type: String, _ help: String, _ samples: [(labels: String, value: Int)]) {
            lines.append("# HELP \(name) \(help)")
            lines.append("# TYPE \(name) \(type)")
            for sample in samples { lines.append("\(name)\(sample.labels) \(sample.value)") }
        }
        func load(_ atomic: borrowing Atomic<Int>) -> Int { atomic.load(ordering: .relaxed) }
        metric("sync_connections", "gauge", "WebSocket connections open now.", [("", openConnections)])
        metric(
            "sync_connections_accepted_total", "counter", "Connections accepted after the upgrade, since start.",
            [("", load(connectionsAccepted))])
        metric(
            "sync_connections_refused_total", "counter", "Connections refused or closed before they were served.",
            [
                ("{reason=\"connection_limit\"}", load(refusedConnectionLimit)),
                ("{reason=\"stopping\"}", load(refusedStopping) + load(network.refusedStopping)),
                ("{reason=\"handshaking_limit\"}", load(network.refusedHandshaking)),
                ("{reason=\"descriptors\"}", load(network.refusedDescriptors)),
                ("{reason=\"bad_handshake\"}", load(network.refusedHandshake)),
            ])
        metric("sync_sessions", "gauge", "Sessions bound now.", [("", load(sessionsBound))])
        metric("sync_partitions_loaded", "gauge", "Partitions held in memory now.", [("", load(partitionsLoaded))])
        metric(
            "sync_received_bytes_total", "counter", "Bytes read from client sockets.",
            [("", load(network.bytesReceived))])
        metric("sync_sent_bytes_total", "counter", "Bytes written to client sockets.", [("", load(network.bytesSent))])
        metric("sync_uploads_total", "counter", "Upload messages integrated.", [("", load(uploads))])
        metric(
            "sync_uploaded_changesets_total", "counter", "Changesets integrated from uploads.",
            [("", load(changesetsUploaded))])
        metric(
            "sync_client_resets_total", "counter", "clientResetRequired refusals sent.", [("", load(clientResets))])
        metric(
            "sync_http_requests_total", "counter", "Plain HTTP requests answered (metrics, health).",
            [("", load(network.plainHTTPRequests))])
        if let syncLatency {
            lines.append("# HELP sync_fsync_seconds How long each fsync of the file store took.")
            lines.append("# TYPE sync_fsync_seconds histogram")
            lines += syncLatency.prometheusLines("sync_fsync_seconds")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The answer to a plain HTTP `GET` for `target`: `/metrics`, `/healthz`; `nil` for other paths.
    func respond(to target: String, openConnections: @Sendable () -> Int) -> PlainHTTPResponse? {
        let path = target.split(separator: "?", maxSplits: 1).first.map(String.init) ?? target
        switch path {
        case "/metrics":
            return PlainHTTPResponse(
                status: 200, reason: "OK", contentType: "text/plain; version=0.0.4; charset=utf-8",
                body: prometheusText(openConnections: openConnections()))
        case "/healthz":
            return isStopping.load(ordering: .relaxed)
                ? PlainHTTPResponse(status: 503, reason: "Service Unavailable", body: "stopping\n")
                : PlainHTTPResponse(status: 200, reason: "OK", body: "ok\n")
        default:
            return nil
        }
    }
}

/// Takes no connection: a listener that serves only plain HTTP (metrics) refuses every upgrade.
final class RefusingAcceptor: SyncConnectionAcceptor {
    func accept(_ connection: any SyncServerConnection) -> Bool { false }
}
