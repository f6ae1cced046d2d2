import Dispatch
import Foundation
import SyncEngine
import SyncServer

/// P13: memory is bounded by what is in flight, not by history. Two apps sync `megabytes` MB (1 MiB
/// changesets) through a server with a file store, the reader's app subscribed to `changesets` (each read
/// back from its store file), while a sampler records peak RSS; then a fresh app
/// opens the reader's store (now `megabytes` MB on disk) and the RSS it costs is compared with opening an
/// empty store.
enum P13 {
    static func run(megabytes: Int) async {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("P13-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let peak = Locked(residentBytes())
        let sampling = Locked(true)
        let sampler = Thread {
            while sampling.withLock({ $0 }) {
                let now = residentBytes()
                peak.withLock { $0 = max($0, now) }
                usleep(20_000)
            }
        }
        sampler.start()
        let start = residentBytes()
        do {
            let store = try FilePartitionStore(directory: root.appendingPathComponent("server").path)
            let server = try await SyncServer.embedded(configuration: .init(store: store, logLevel: .off))
            let writerApp = SyncApp(
                configuration: .init(
                    server: server.endpoint, directory: root.appendingPathComponent("w"), logLevel: .off))
            let writer = try await writerApp.login(.anonymous).openSession(partition: "p13")
            let readerApp = SyncApp(
                configuration: .init(
                    server: server.endpoint, directory: root.appendingPathComponent("r"), logLevel: .off))
            let reader = try await readerApp.login(.anonymous).openSession(partition: "p13")
            // The reader's app watches every changeset as it arrives: each is read back from its store file
            // (the replay path) on the session's callback queue.
            let delivered = Locked((count: 0, bytes: 0))
            let watching = reader.changesets.subscribe { changeset in
                delivered.withLock {
                    $0.count += 1
                    $0.bytes += changeset.data.count
                }
            }
            let payload = Data(repeating: 0x3C, count: 1 << 20)
            let clock = ContinuousClock()
            let began = clock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<megabytes {
                    if index >= 16 { try await group.next() }
                    group.addTask { try await writer.write(payload) }
                }
                try await group.waitForAll()
            }
            try await writer.wait(for: .upload)
            try await reader.wait(for: .download)
            let deadline = ContinuousClock.now + .seconds(300)
            while delivered.withLock({ $0.count }) < megabytes, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            watching.invalidate()
            let seen = delivered.withLock { $0 }
            guard seen.count == megabytes, seen.bytes == megabytes << 20 else {
                throw P13Failure(
                    description: "the reader's changesets delivered \(seen.count) changesets, \(seen.bytes) bytes")
            }
            let seconds = Double(milliseconds(clock.now - began)) / 1000
            sampling.withLock { $0 = false }
            let syncPeak = peak.withLock { $0 }
            print(
                "  synced \(megabytes) MiB in \(format(seconds)) s (the reader's changesets subscriber got all of them); RSS \(start >> 20) MiB at start, peak \(syncPeak >> 20) MiB while syncing (target < 100 MB)"
            )
            try await readerApp.close()
            try await writerApp.close()
            await server.stop()
            await store.close()

            // Opening: an empty store, then the full one, each in a fresh app.
            let emptyCost = try await openCost(root.appendingPathComponent("empty"), endpoint: server.endpoint)
            let fullCost = try await openCost(root.appendingPathComponent("r"), endpoint: server.endpoint)
            print(
                "  opening a store: empty +\(emptyCost >> 10) KiB RSS, \(megabytes) MiB store +\(fullCost >> 10) KiB RSS (index: \(megabytes) entries)"
            )
        } catch {
            sampling.withLock { $0 = false }
            print("  P13 failed: \(error)")
        }
    }

    /// The RSS growth of opening the store in `directory` (suspended: no sync).
    static func openCost(_ directory: URL, endpoint: SyncEndpoint) async throws -> Int {
        let before = residentBytes()
        let app = SyncApp(configuration: .init(server: endpoint, directory: directory, logLevel: .off))
        let session = try await app.login(.anonymous).openSession(partition: "p13")
        session.suspend()
        let after = residentBytes()
        try await app.close()
        return max(0, after - before)
    }
}

struct P13Failure: Error, CustomStringConvertible {
    let description: String
}
