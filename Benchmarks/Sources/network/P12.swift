import Dispatch
import Foundation
import SyncEngine
import SyncServer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// P12: latency from `write` on one app to the `changesets` callback on another, through a networked
/// server with a file store (three durable copies on the path: writer, server, reader), at 100 writes/s;
/// beside the disk's own 1 KiB write + fsync latency at the same rate.
enum P12 {
    static func run(samples: Int) async {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("P12-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }

        let disk = diskLatencies(path: root.appendingPathComponent("fsync").path, samples: samples)
        do {
            let store = try FilePartitionStore(directory: root.appendingPathComponent("server").path)
            let server = try await SyncServer.listening(configuration: .init(store: store, logLevel: .off))
            let sync = try await writeToOtherAppLatencies(
                endpoint: server.webSocketEndpoint!, directory: root, samples: samples)
            await server.stop()
            await store.close()
            let diskP50 = quantile(disk, 0.5)
            print("  disk 1 KiB write+fsync:   p50 \(format(diskP50)) ms   p99 \(format(quantile(disk, 0.99))) ms")
            print(
                "  write → other app:        p50 \(format(quantile(sync, 0.5))) ms   p99 \(format(quantile(sync, 0.99))) ms  (\(sync.count) samples)"
            )
            let perCopy = quantile(sync, 0.5) / 3
            print(
                "  p50 per durable copy (3 on the path): \(format(perCopy)) ms = \(format(perCopy / diskP50)) × the disk's fsync p50 (target ≤ 2.5×)"
            )
        } catch {
            print("  P12 failed: \(error)")
        }
    }

    /// `samples` writes of 1 KiB at 100 per second on one app, each timed until the `changesets` callback
    /// of another app (both with their stores under `directory`) delivers it, through `endpoint`.
    static func writeToOtherAppLatencies(
        endpoint: SyncEndpoint, directory root: URL, samples: Int
    ) async throws
        -> [Duration]
    {
        let writer = try await SyncApp(
            configuration: .init(server: endpoint, directory: root.appendingPathComponent("w"), logLevel: .off)
        ).login(.anonymous).openSession(partition: "p12")
        let reader = try await SyncApp(
            configuration: .init(server: endpoint, directory: root.appendingPathComponent("r"), logLevel: .off)
        ).login(.anonymous).openSession(partition: "p12")
        let sent = Locked<[Int: ContinuousClock.Instant]>([:])
        let latencies = Locked<[Duration]>([])
        let done = DispatchSemaphore(value: 0)
        let token = reader.changesets.subscribe { changeset in
            let index = changeset.data.withUnsafeBytes { Int($0.loadUnaligned(as: UInt32.self)) }
            let now = ContinuousClock.now
            guard let start = sent.withLock({ $0[index] }) else { return }
            let count = latencies.withLock { list in
                list.append(now - start)
                return list.count
            }
            if count == samples { done.signal() }
        }
        let clock = ContinuousClock()
        var next = clock.now
        for index in 0..<samples {
            next = next + .milliseconds(10)
            try await clock.sleep(until: next)
            var payload = Data(count: 1024)
            payload.withUnsafeMutableBytes { $0.storeBytes(of: UInt32(index), as: UInt32.self) }
            sent.withLock { $0[index] = ContinuousClock.now }
            try await writer.write(payload)
        }
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                _ = done.wait(timeout: .now() + 60)
                continuation.resume()
            }
        }
        token.invalidate()
        writer.suspend()
        reader.suspend()
        return latencies.withLock { $0 }
    }

    /// 1 KiB write + fsync latencies at 100 per second.
    static func diskLatencies(path: String, samples: Int) -> [Duration] {
        let descriptor = open(path, O_CREAT | O_WRONLY | O_APPEND, 0o644)
        defer { close(descriptor) }
        let block = [UInt8](repeating: 0x5A, count: 1024)
        var latencies: [Duration] = []
        let clock = ContinuousClock()
        var next = clock.now
        for _ in 0..<samples {
            next = next + .milliseconds(10)
            let wait = clock.now.duration(to: next)
            if wait > .zero { usleep(UInt32(milliseconds(wait) * 1000)) }
            let start = clock.now
            _ = block.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            fsync(descriptor)
            latencies.append(clock.now - start)
        }
        return latencies
    }
}
