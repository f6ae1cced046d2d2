import Foundation
import TestSupport
import Testing

@testable import SyncSpinnerKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `sync-spinner --server URL --watch-server`: the server's `/metrics`, one line per reading.
@Suite("sync-spinner --watch-server", .timeLimit(.minutes(5)))
struct ServerWatchTests {
    @Test("a reading becomes one line: gauges as they are, changesets with their increase, bytes as rates")
    func line() {
        let page = """
            # TYPE sync_connections gauge
            sync_connections 2
            sync_sessions 3
            sync_partitions_loaded 1
            sync_uploaded_changesets_total 40
            sync_received_bytes_total 5000
            sync_sent_bytes_total 10000
            sync_fsync_seconds_sum 0.02
            sync_fsync_seconds_count 10
            sync_client_resets_total 1
            sync_connections_refused_total{reason="connection_limit"} 2
            sync_connections_refused_total{reason="stopping"} 1
            """
        let before = ServerWatch.samples(page.replacingOccurrences(of: "total 40", with: "total 30"))
            .merging(["sync_received_bytes_total": 3000, "sync_sent_bytes_total": 6000]) { $1 }
        let text = ServerWatch.line(ServerWatch.samples(page), previous: before, seconds: 2)
        #expect(
            text
                == "connections 2  sessions 3  partitions 1  uploaded 40 changesets (+10)  in 1.0 KB/s  out 2.0 KB/s  "
                + "fsyncs 10 avg 2.00 ms  resets 1  refused 3")
    }

    @Test("--watch-server without --server is bad usage (64)")
    func needsServer() async throws {
        let run = try await SpinnerProcess.run(["--watch-server"])
        #expect(run.status == 64)
        #expect(run.stderr.contains("--watch-server needs --server"))
    }

    @Test(
        "after a workload synced through sync-server, --watch-server prints its readings: the changesets uploaded, no connection left"
    )
    func watchesARealServer() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("spinner-watch-\(UUID())")
        defer { try? FileManager.default.removeItem(at: data) }
        let server = try ChildProcess(syncServer: ["--port", "0", "--data", data.path])
        let port = try await server.port()
        let workload = try await SpinnerProcess.run([
            "--server", "ws://127.0.0.1:\(port)", "--changesets", "25", "--size", "100000",
        ])
        #expect(workload.status == 0, "\(workload.stderr)")
        // The spinner's apps closed their connections when it exited; the server notices shortly after.
        func watchTwice() async throws -> SpinnerProcess.Result {
            try await SpinnerProcess.run([
                "--server", "ws://127.0.0.1:\(port)", "--watch-server", "--watch-count", "2", "--watch-interval", "0.1",
            ])
        }
        var watch = try await watchTwice()
        try await waitUntil("a reading with no connection open") {
            if watch.stdout.hasPrefix("connections 0") { return true }
            watch = try await watchTwice()
            return false
        }
        #expect(watch.status == 0, "\(watch.stderr)")
        let lines = watch.stdout.split(separator: "\n")
        #expect(lines.count == 2, "\(watch.stdout)")
        for line in lines {
            #expect(line.contains("uploaded 25 changesets"), "\(line)")
            #expect(line.contains("sessions 0"), "\(line)")
        }
        #expect(lines.last?.contains("(+0)") == true, "\(watch.stdout)")
        #expect(try await server.stop(SIGTERM) == 0)
        // A server that is gone: exit 1 with the reason.
        let gone = try await SpinnerProcess.run(["--server", "ws://127.0.0.1:\(port)", "--watch-server"])
        #expect(gone.status == 1)
        #expect(gone.stderr.contains("cannot read http://127.0.0.1:\(port)/metrics"), "\(gone.stderr)")
    }
}
