import Foundation
import SyncEngine

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `sync-spinner --server ws://host:port --watch-server`: a small live monitor. Reads the server's
/// `GET /metrics` (same host and port, plain HTTP) every `--watch-interval` seconds and prints one line
/// per reading — what is open now and what moved since the previous line.
enum ServerWatch {
    /// The samples of a Prometheus text page: `name{labels}` → value (comments skipped).
    static func samples(_ page: String) -> [String: Double] {
        var samples: [String: Double] = [:]
        for line in page.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                continue
            }
            samples[String(line[..<space])] = value
        }
        return samples
    }

    /// One line for a reading; `previous` (the reading before) gives the rates.
    static func line(_ now: [String: Double], previous: [String: Double]?, seconds: Double) -> String {
        func value(_ name: String) -> Double { now[name] ?? 0 }
        func delta(_ name: String) -> Double { max(0, value(name) - (previous?[name] ?? value(name))) }
        let refused = now.filter { $0.key.hasPrefix("sync_connections_refused_total") }.values.reduce(0, +)
        let syncs = value("sync_fsync_seconds_count")
        let averageSync = syncs > 0 ? value("sync_fsync_seconds_sum") / syncs * 1000 : 0
        let rate = { (name: String) -> String in
            let perSecond = seconds > 0 ? delta(name) / seconds : 0
            return ByteCountFormatting.text(perSecond) + "/s"
        }
        return [
            "connections \(Int(value("sync_connections")))",
            "sessions \(Int(value("sync_sessions")))",
            "partitions \(Int(value("sync_partitions_loaded")))",
            "uploaded \(Int(value("sync_uploaded_changesets_total"))) changesets (+\(Int(delta("sync_uploaded_changesets_total"))))",
            "in \(rate("sync_received_bytes_total"))",
            "out \(rate("sync_sent_bytes_total"))",
            "fsyncs \(Int(syncs)) avg \(String(format: "%.2f", averageSync)) ms",
            "resets \(Int(value("sync_client_resets_total")))",
            "refused \(Int(refused))",
        ].joined(separator: "  ")
    }

    /// Prints `count` readings (`nil`: until interrupted) of `endpoint`'s metrics, `interval` seconds apart.
    /// Returns 0, or 1 when the metrics cannot be read.
    static func run(_ endpoint: SyncEndpoint, interval: Double, count: Int?) async -> Int32 {
        guard case .webSocket(let host, let port) = endpoint.kind,
            let url = URL(
                string: host.contains(":") ? "http://[\(host)]:\(port)/metrics" : "http://\(host):\(port)/metrics")
        else { return 1 }
        var previous: (samples: [String: Double], at: ContinuousClock.Instant)?
        var printed = 0
        while count.map({ printed < $0 }) ?? true {
            if printed > 0 { try? await Task.sleep(for: .milliseconds(Int(interval * 1000))) }
            let page: String
            do {
                let (data, response) = try await URLSession.shared.data(from: url)
                guard (response as? HTTPURLResponse)?.statusCode == 200 else {
                    throw URLError(.badServerResponse)
                }
                page = String(decoding: data, as: UTF8.self)
            } catch {
                FileHandle.standardError.write(Data("sync-spinner: cannot read \(url): \(error)\n".utf8))
                return 1
            }
            let now = ContinuousClock.now
            let samples = samples(page)
            let elapsed = previous.map { $0.at.duration(to: now) } ?? .zero
            let exact = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            // Unbuffered: a reader of the pipe sees each line as it is made.
            FileHandle.standardOutput.write(
                Data((line(samples, previous: previous?.samples, seconds: exact) + "\n").utf8))
            previous = (samples, now)
            printed += 1
        }
        return 0
    }
}
