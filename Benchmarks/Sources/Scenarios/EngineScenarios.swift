import Dispatch
import Foundation
import SyncEngine
import SyncServer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// P7 (progress fan-out in the engine) and P8 (sync throughput) for SyncStreams' engine.
public enum EngineScenarios {
    public static let all: [Scenario] = [
        Scenario(
            id: "P7", title: "progress fan-out: 1 session's notifier → 1,000 reportIndefinitely subscribers",
            library: "SyncStreams", unit: "delivery", count: Sizes.p7Updates, opsPerCount: Sizes.p7Subscribers,
            run: { progressFanOut($0, mode: .reportIndefinitely, onSessionExecutor: false) }),
        Scenario(
            id: "P7 outstanding",
            title: "progress fan-out: 1,000 forCurrentlyOutstandingWork subscribers",
            library: "SyncStreams", unit: "delivery", count: Sizes.p7Updates, opsPerCount: Sizes.p7Subscribers,
            run: { progressFanOut($0, mode: .forCurrentlyOutstandingWork, onSessionExecutor: false) }),
        Scenario(
            id: "P7 session path",
            title: "progress fan-out as a session delivers it: notifier → observe(on: .immediate)",
            library: "SyncStreams", unit: "delivery", count: Sizes.p7Updates, opsPerCount: Sizes.p7Subscribers,
            run: { progressFanOut($0, mode: .reportIndefinitely, onSessionExecutor: true) }),
        Scenario(
            id: "P7 status", title: "the write path (256 B writes, 64 in flight, offline) while session.status is",
            library: "not subscribed", unit: "write", count: Sizes.p7StatusWrites,
            run: { await statusWritePath(writes: $0, subscribers: 0) }),
        Scenario(
            id: "P7 status", title: "the write path (256 B writes, 64 in flight, offline) while session.status is",
            library: "100 subscribers", unit: "write", count: Sizes.p7StatusWrites,
            run: { await statusWritePath(writes: $0, subscribers: 100) }),
        Scenario(
            id: "P8", title: "sync throughput: 64 KB changesets, app → embedded server → app",
            library: "SyncStreams", unit: "MB", count: Sizes.p8Megabytes,
            run: { await embeddedSync(megabytes: $0, writesInFlight: 1) }),
        Scenario(
            id: "P8 64 in flight",
            title: "sync throughput, the writer keeping 64 writes in flight (group commit)",
            library: "SyncStreams", unit: "MB", count: Sizes.p8Megabytes,
            run: { await embeddedSync(megabytes: $0, writesInFlight: 64) }),
        Scenario(
            id: "P8 64 in flight",
            title: "sync throughput, the writer keeping 64 writes in flight (group commit)",
            library: "disk: 64 × 64 KiB, one fsync", unit: "MB", count: Sizes.p8Megabytes,
            run: { batchedDurableWrites(megabytes: $0) }),
        Scenario(
            id: "P8 log .off", title: "P8 64 in flight with logging off (apps and server at .off)",
            library: "SyncStreams", unit: "MB", count: Sizes.p8Megabytes,
            run: { await embeddedSync(megabytes: $0, writesInFlight: 64, logLevel: .off) }),
        Scenario(
            id: "P8 log .warn", title: "P8 64 in flight at the default log level (.warn; nothing is logged)",
            library: "SyncStreams", unit: "MB", count: Sizes.p8Megabytes,
            run: { await embeddedSync(megabytes: $0, writesInFlight: 64, logLevel: .warn) }),
        Scenario(
            id: "P8n", title: "sync throughput over loopback WebSocket: 64 writes in flight, app → server → app",
            library: "SyncStreams", unit: "MB", count: Sizes.p8Megabytes,
            run: { await embeddedSync(megabytes: $0, writesInFlight: 64, overNetwork: true) }),
        Scenario(
            id: "P8n", title: "sync throughput over loopback WebSocket: 64 writes in flight, app → server → app",
            library: "embedded (same run)", unit: "MB", count: Sizes.p8Megabytes,
            run: { await embeddedSync(megabytes: $0, writesInFlight: 64) }),
        Scenario(
            id: "P8n durable",
            title: "P8n with the server's store a FilePartitionStore (as `sync-server --data`); compare P8n",
            library: "SyncStreams", unit: "MB", count: Sizes.p8Megabytes,
            run: { await embeddedSync(megabytes: $0, writesInFlight: 64, overNetwork: true, durableServer: true) }),
        Scenario(
            id: "P8 64 in flight window",
            title: "the disk alone for the embedded path's two durable copies, written at once",
            library: "disk: 2 files at once, each 64 × 64 KiB + fsync", unit: "MB", count: Sizes.p8Megabytes,
            run: { batchedDurableWrites(megabytes: $0, files: 2) }),
        Scenario(
            id: "P8n durable window",
            title: "the disk alone for the durable network path's three durable copies, written at once",
            library: "disk: 3 files at once, each 64 × 64 KiB + fsync", unit: "MB", count: Sizes.p8Megabytes,
            run: { batchedDurableWrites(megabytes: $0, files: 3) }),
        Scenario(
            id: "P8 64 in flight window",
            title: "P8 64 in flight, timed from the first write to the reader's last changeset (no set-up or clean-up)",
            library: "SyncStreams", unit: "MB", count: Sizes.p8Megabytes, metric: .reportedByRun,
            run: { await embeddedSync(megabytes: $0, writesInFlight: 64, timing: .syncWindow) }),
        Scenario(
            id: "P8n durable window",
            title: "P8n durable, timed from the first write to the reader's last changeset (no set-up, no clean-up)",
            library: "SyncStreams", unit: "MB", count: Sizes.p8Megabytes, metric: .reportedByRun,
            run: {
                await embeddedSync(
                    megabytes: $0, writesInFlight: 64, overNetwork: true, durableServer: true, timing: .syncWindow)
            }),
        Scenario(
            id: "P8 durable",
            title: "P8 (writes one after the other) with the embedded server's store a FilePartitionStore; compare P8",
            library: "SyncStreams", unit: "MB", count: Sizes.p8Megabytes,
            run: { await embeddedSync(megabytes: $0, writesInFlight: 1, durableServer: true) }),
        Scenario(
            id: "P8 64 in flight durable",
            title: "P8 64 in flight with the embedded server's store a FilePartitionStore; compare P8 64 in flight",
            library: "SyncStreams", unit: "MB", count: Sizes.p8Megabytes,
            run: { await embeddedSync(megabytes: $0, writesInFlight: 64, durableServer: true) }),
        Scenario(
            id: "P8 64 in flight",
            title: "sync throughput, the writer keeping 64 writes in flight (group commit)",
            library: "loopback TCP", unit: "MB", count: Sizes.p8Megabytes, run: { loopbackTCP(megabytes: $0) }),
        Scenario(
            id: "P8", title: "sync throughput: 64 KB changesets, app → embedded server → app",
            library: "loopback TCP", unit: "MB", count: Sizes.p8Megabytes, run: { loopbackTCP(megabytes: $0) }),
    ]

    /// P8w, group commit across sessions: 8 and 32 writer apps × 4 writes in flight of 1 KiB, each with a
    /// durable and an in-memory server store, and 8 × 64 KiB with a durable one.
    public static let multiWriterScenarios: [Scenario] = [
        (writers: 8, kib: 1, durable: true), (8, 1, false), (32, 1, true), (32, 1, false), (8, 64, true),
    ].map { writers, kib, durable in
        Scenario(
            id: "P8w \(writers) writers\(kib == 1 ? "" : " \(kib) KiB")",
            title: "group commit across sessions: \(writers) apps × 4 writes in flight, \(kib) KiB each",
            library: durable ? "durable (file store)" : "in-memory store", unit: "changeset",
            count: kib == 1 ? Sizes.p8wChangesets : Sizes.p8wChangesets / 4,
            run: { await multiWriterSync(changesets: $0, writers: writers, bytes: kib * 1024, durableServer: durable) })
    }

    /// One notifier (the one behind a session's progress streams), 1,000 subscribers, `updates` updates
    /// with growing byte counts (so every update is a new value and none is dropped as a repeat).
    @inline(never)
    public static func progressFanOut(_ updates: Int, mode: ProgressMode, onSessionExecutor: Bool) -> Int {
        let notifier = ProgressNotifier()
        let accumulator = Accumulator()
        // A captured total no update reaches, so forCurrentlyOutstandingWork subscribers stay registered.
        notifier.update(.upload, transferred: 0, transferrable: Int.max / 2)
        let tokens = (0..<Sizes.p7Subscribers).map { _ in
            let stream = notifier.progress(for: .upload, mode: mode)
            if onSessionExecutor {
                return stream.observe(on: ImmediateExecutor()).subscribe { accumulator.add($0.transferredBytes) }
            }
            return stream.subscribe { accumulator.add($0.transferredBytes) }
        }
        for update in 1...updates {
            notifier.update(.upload, transferred: update, transferrable: Int.max / 2)
        }
        for token in tokens { token.invalidate() }
        return accumulator.count - Sizes.p7Subscribers  // the deliveries of the updates (not the snapshot)
    }

    /// P7 status: `writes` writes of 256 bytes (64 in flight, so group commit batches them) to a session
    /// opened suspended (no connection: only the local write path is timed), with `subscribers`
    /// subscribers on `session.status` (0: nobody). The status is published by a job on the session's
    /// callback executor, computed from the newest facts, never on the writer's path; nobody subscribed,
    /// that job sends into a subject with no subscribers. So the two variants should cost the same per
    /// write: what subscribing costs the write path is the difference.
    public static func statusWritePath(writes: Int, subscribers: Int) async -> Int {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("P7-status-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        do {
            let server = try await SyncServer.embedded()
            let app = SyncApp(configuration: .init(server: server.endpoint, directory: root))
            let session = try await app.login(.anonymous).openSession(partition: "p7-status", suspended: true)
            let seen = Accumulator()  // fed on the session's serial callback executor only
            let tokens = (0..<subscribers).map { _ in
                session.status.subscribe { seen.add($0.pending.uploadChangesets) }
            }
            let payload = Data(repeating: 0x5A, count: 256)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<writes {
                    if index >= 64 { try await group.next() }
                    group.addTask { _ = try await session.write(payload) }
                }
                try await group.waitForAll()
            }
            for token in tokens { token.invalidate() }
            try? await app.close()
            await server.stop()
            return writes &+ seen.count
        } catch {
            fatalError("P7 status: \(error)")
        }
    }

    /// Two apps on one embedded server: the first writes `megabytes` MB as 64 KB changesets, keeping up to
    /// `writesInFlight` writes waiting at a time (1: one after the other), the second waits until it holds
    /// all of them. One op is one MB, so ns/op gives the throughput.
    /// With `overNetwork`, the server listens on loopback and both apps reach it with `WebSocketTransport`.
    /// `logLevel` is the apps' and the server's (default: theirs, `.warn`).
    /// With `durableServer`, the server's store is a `FilePartitionStore` in the run's temporary directory
    /// (what `sync-server --data` uses: every batch fsynced on the server too), not the in-memory default.
    /// `timing`: what the run's figure covers (see `SyncTiming`).
    public static func embeddedSync(
        megabytes: Int, writesInFlight: Int, overNetwork: Bool = false, durableServer: Bool = false,
        logLevel: SyncLogLevel = .warn, timing: SyncTiming = .wholeRun
    ) async -> Int {
        let changesets = megabytes * 16
        let payload = Data(repeating: 0xA5, count: 64 * 1024)
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("P8-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        do {
            let store: FilePartitionStore? =
                durableServer
                ? try FilePartitionStore(directory: root.appendingPathComponent("server").path, logLevel: logLevel)
                : nil
            let serverConfiguration =
                store.map { SyncServer.Configuration(store: $0, logLevel: logLevel) }
                ?? SyncServer.Configuration(logLevel: logLevel)
            let server =
                overNetwork
                ? try await SyncServer.listening(configuration: serverConfiguration)
                : try await SyncServer.embedded(configuration: serverConfiguration)
            let endpoint = overNetwork ? server.webSocketEndpoint! : server.endpoint
            let writerApp = SyncApp(
                configuration: .init(
                    server: endpoint, directory: root.appendingPathComponent("writer"), logLevel: logLevel))
            let readerApp = SyncApp(
                configuration: .init(
                    server: endpoint, directory: root.appendingPathComponent("reader"), logLevel: logLevel))
            let writer = try await writerApp.login(.anonymous).openSession(partition: "p8")
            let reader = try await readerApp.login(.anonymous).openSession(partition: "p8")
            let received = DispatchSemaphore(value: 0)
            let counter = Accumulator()
            let finished = Accumulator()
            let token = reader.changesets.subscribe { changeset in
                counter.add(changeset.data.count)
                if counter.count == changesets {
                    finished.total = Int(DispatchTime.now().uptimeNanoseconds)
                    received.signal()
                }
            }
            let started = Int(DispatchTime.now().uptimeNanoseconds)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<changesets {
                    if index >= writesInFlight { try await group.next() }
                    group.addTask { try await writer.write(payload) }
                }
                try await group.waitForAll()
            }
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    received.wait()
                    continuation.resume()
                }
            }
            token.invalidate()
            writer.suspend()
            reader.suspend()
            await server.stop()
            await store?.close()
            switch timing {
            case .wholeRun: return counter.total
            case .syncWindow: return finished.total - started  // read after `received`: the callback wrote it before
            }
        } catch {
            fatalError("P8 embedded: \(error)")
        }
    }

    /// P8w: `writers` apps (one session each, so one client file each) write `changesets` changesets of
    /// `bytes` bytes in total to ONE partition of an embedded server, each keeping up to 4 writes in
    /// flight; a reader app waits until it holds all of them. One op is one changeset. With
    /// `durableServer`, the server's store is a `FilePartitionStore` in a temporary directory; the run then
    /// prints to stderr the server's fsyncs (`sync_fsync_seconds_count`) and uploads
    /// (`sync_uploads_total`) per changeset, from `SyncServer.prometheusMetrics`.
    public static func multiWriterSync(changesets: Int, writers: Int, bytes: Int, durableServer: Bool) async -> Int {
        let payload = Data(repeating: 0xA5, count: bytes)
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("P8w-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        do {
            let store: FilePartitionStore? =
                durableServer ? try FilePartitionStore(directory: root.appendingPathComponent("server").path) : nil
            let server = try await SyncServer.embedded(
                configuration: store.map { SyncServer.Configuration(store: $0) } ?? SyncServer.Configuration())
            let readerApp = SyncApp(
                configuration: .init(server: server.endpoint, directory: root.appendingPathComponent("reader")))
            let reader = try await readerApp.login(.anonymous).openSession(partition: "p8w")
            var writerSessions: [SyncSession] = []
            for index in 0..<writers {
                let app = SyncApp(
                    configuration: .init(
                        server: server.endpoint, directory: root.appendingPathComponent("writer-\(index)")))
                writerSessions.append(try await app.login(.anonymous).openSession(partition: "p8w"))
            }
            let fsyncsBefore = durableServer ? metric("sync_fsync_seconds_count", in: server.prometheusMetrics) : 0
            let uploadsBefore = metric("sync_uploads_total", in: server.prometheusMetrics)
            let received = DispatchSemaphore(value: 0)
            let counter = Accumulator()
            let token = reader.changesets.subscribe { changeset in
                counter.add(changeset.data.count)
                if counter.count == changesets { received.signal() }
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, writer) in writerSessions.enumerated() {
                    let share = changesets / writers + (index < changesets % writers ? 1 : 0)
                    group.addTask {
                        try await withThrowingTaskGroup(of: Void.self) { writes in
                            for write in 0..<share {
                                if write >= 4 { try await writes.next() }
                                writes.addTask { try await writer.write(payload) }
                            }
                            try await writes.waitForAll()
                        }
                    }
                }
                try await group.waitForAll()
            }
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    received.wait()
                    continuation.resume()
                }
            }
            token.invalidate()
            let text = server.prometheusMetrics
            let uploads = metric("sync_uploads_total", in: text) - uploadsBefore
            var line = "P8w \(writers) writers × \(bytes) B: \(changesets) changesets, \(uploads) uploads"
            if durableServer {
                let fsyncs = metric("sync_fsync_seconds_count", in: text) - fsyncsBefore
                let perChangeset = Double(fsyncs) / Double(changesets)
                line += ", \(fsyncs) server fsyncs (\(String(format: "%.3f", perChangeset)) per changeset)"
            }
            FileHandle.standardError.write(Data((line + "\n").utf8))
            for writer in writerSessions { writer.suspend() }
            reader.suspend()
            await server.stop()
            await store?.close()
            return counter.total
        } catch {
            fatalError("P8w: \(error)")
        }
    }

    /// The value of the unlabelled Prometheus sample `name` in `text` (0 when absent).
    static func metric(_ name: String, in text: String) -> Int {
        for line in text.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Int(Double(line.dropFirst(name.count + 1)) ?? 0)
        }
        return 0
    }

    /// The disk's own batched durable bandwidth: `megabytes` MB written as 64 KiB writes, an fsync after
    /// every 64 of them (what group commit at best achieves), to each of `files` files at once, one thread
    /// per file. With 2 and 3 files it is what the disk alone allows the embedded path (writer and reader
    /// stores) and the durable network path (writer, server and reader stores), which write every
    /// changeset that many times at once: their ratio is the most the durable network path can reach of
    /// the embedded one on this disk, before any CPU is spent.
    @inline(never)
    public static func batchedDurableWrites(megabytes: Int, files: Int = 1) -> Int {
        guard files > 1 else { return batchedDurableWrites(megabytes: megabytes, to: "P8-disk-\(UUID().uuidString)") }
        // One thread per file, each with its own result slot; the group's wait orders their writes before the reads.
        let written = UnsafeMutableBufferPointer<Int>.allocate(capacity: files)
        defer { written.deallocate() }
        nonisolated(unsafe) let slots = written
        let done = DispatchGroup()
        for file in 0..<files {
            done.enter()
            Thread {
                slots[file] = batchedDurableWrites(megabytes: megabytes, to: "P8-disk-\(UUID().uuidString)")
                done.leave()
            }.start()
        }
        done.wait()
        return written.reduce(0, +) / files
    }

    private static func batchedDurableWrites(megabytes: Int, to name: String) -> Int {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(name).path
        let descriptor = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0o644)
        defer {
            close(descriptor)
            unlink(path)
        }
        let block = [UInt8](repeating: 0xA5, count: 64 * 1024)
        var written = 0
        for index in 0..<(megabytes * 16) {
            written += block.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if index % 64 == 63 { fsync(descriptor) }
        }
        fsync(descriptor)
        return written
    }

    /// The same bytes through a loopback TCP connection: 64 KB writes on one thread, reads on another.
    @inline(never)
    public static func loopbackTCP(megabytes: Int) -> Int {
        let total = megabytes * 1024 * 1024
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                _ = bind(listener, pointer, length)
                _ = getsockname(listener, pointer, &length)
            }
        }
        listen(listener, 1)
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = connect(client, $0, length) }
        }
        let server = accept(listener, nil, nil)
        let done = DispatchSemaphore(value: 0)
        let receivedBytes = Accumulator()
        Thread {
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            var received = 0
            while received < total {
                let count = buffer.withUnsafeMutableBytes { read(server, $0.baseAddress, $0.count) }
                if count <= 0 { break }
                received += count
            }
            receivedBytes.add(received)
            done.signal()
        }.start()
        let chunk = [UInt8](repeating: 0xA5, count: 64 * 1024)
        var sent = 0
        while sent < total {
            let count = chunk.withUnsafeBytes { write(client, $0.baseAddress, min($0.count, total - sent)) }
            if count <= 0 { break }
            sent += count
        }
        done.wait()
        close(client)
        close(server)
        close(listener)
        return receivedBytes.total
    }
}

/// What a P8 run's figure covers.
public enum SyncTiming: Sendable {
    /// The whole run, as `compare` times it: starting the server, opening both apps' sessions, the sync,
    /// stopping, and removing the run's directory (three stores' files when the server's is durable).
    case wholeRun
    /// Only the sync: from the first write to the reader's callback for the last changeset (the run
    /// returns those nanoseconds; the scenario's metric is `.reportedByRun`).
    case syncWindow
}
