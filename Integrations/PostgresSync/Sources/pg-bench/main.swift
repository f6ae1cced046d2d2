import Dispatch
import Foundation
import PostgresSync
import SyncEngine
import SyncServer

// `scripts/with-postgres.sh swift run -c release pg-bench [MB] [samples]`: P8n (sync throughput, 64 writes
// in flight, app → server → app over loopback WebSocket) and P12 (write → `changesets` callback latency at
// 100 writes/s), each through the file-backed sync-server, one PostgreSQL front end, and two front ends
// (writer on one, reader on the other), in the same run. The database comes from SYNC_BENCH_DATABASE_URL
// or SYNC_TEST_DATABASE_URL. See docs/PERFORMANCE.md and docs/Scaling.md.

let arguments = CommandLine.arguments
let megabytes = arguments.count >= 2 ? Int(arguments[1]) ?? 100 : 100
let samples = arguments.count >= 3 ? Int(arguments[2]) ?? 300 : 300
let repetitions = 3
let environment = ProcessInfo.processInfo.environment
guard let text = environment["SYNC_BENCH_DATABASE_URL"] ?? environment["SYNC_TEST_DATABASE_URL"],
    let database = try? DatabaseURL(text)
else {
    print("pg-bench: set SYNC_BENCH_DATABASE_URL (or run it under scripts/with-postgres.sh)")
    exit(64)
}

/// Where the writer and the reader connect, and what to stop afterwards.
struct Setup {
    let name: String
    let writer: SyncEndpoint
    let reader: SyncEndpoint
    let stop: @Sendable () async -> Void
}

let root = FileManager.default.temporaryDirectory.appendingPathComponent("pg-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)

/// Starts the servers of configuration `kind` afresh.
func setUp(_ kind: String) async throws -> Setup {
    switch kind {
    case "file":
        let store = try FilePartitionStore(directory: root.appendingPathComponent("server-\(UUID().uuidString)").path)
        let server = try await SyncServer.listening(configuration: .init(store: store, logLevel: .error))
        let endpoint = server.webSocketEndpoint!
        return Setup(name: "sync-server, file store", writer: endpoint, reader: endpoint) {
            await server.stop()
            await store.close()
        }
    default:
        let count = kind == "pg1" ? 1 : 2
        var stores: [PostgresPartitionStore] = []
        var servers: [SyncServer] = []
        for index in 0..<count {
            let store = try await PostgresPartitionStore.open(
                .init(url: database, applicationName: "pg-bench-\(index)", logLevel: .error))
            stores.append(store)
            servers.append(try await SyncServer.listening(configuration: .init(store: store, logLevel: .error)))
        }
        let (allStores, allServers) = (stores, servers)
        return Setup(
            name: count == 1 ? "PostgreSQL, one front end" : "PostgreSQL, two front ends (writer | reader)",
            writer: servers[0].webSocketEndpoint!, reader: servers[count - 1].webSocketEndpoint!
        ) {
            for server in allServers { await server.stop() }
            for store in allStores { await store.close() }
        }
    }
}

func app(_ endpoint: SyncEndpoint, _ name: String) -> SyncApp {
    SyncApp(configuration: .init(server: endpoint, directory: root.appendingPathComponent(name), logLevel: .off))
}

/// Counts under a lock.
final class Counter: @unchecked Sendable {
    // @unchecked Sendable: `value` is used under `lock`.
    private let lock = NSLock()
    private var value = 0
    func add() -> Int {
        lock.withLock {
            value += 1
            return value
        }
    }
}

/// When each write started and how long each took to arrive, under a lock.
final class Latencies: @unchecked Sendable {
    // @unchecked Sendable: both fields are used under `lock`.
    private let lock = NSLock()
    private var starts: [Int: ContinuousClock.Instant] = [:]
    private var measured: [Duration] = []

    func started(_ index: Int) { lock.withLock { starts[index] = ContinuousClock.now } }

    /// Records the arrival of write `index`; how many arrived so far (-1 for an unknown write).
    func arrived(_ index: Int, at now: ContinuousClock.Instant) -> Int {
        lock.withLock {
            guard let start = starts[index] else { return -1 }
            measured.append(now - start)
            return measured.count
        }
    }

    var values: [Duration] { lock.withLock { measured } }
}

/// P8n once: `megabytes` MB as 64 KiB changesets, 64 writes in flight; milliseconds per MB until the
/// reader holds them all.
func p8n(_ setup: Setup, partition: String) async throws -> Double {
    let changesets = megabytes * 16
    let payload = Data(repeating: 0xA5, count: 64 * 1024)
    let writer = try await app(setup.writer, "w-\(partition)").login(.anonymous).openSession(partition: partition)
    let reader = try await app(setup.reader, "r-\(partition)").login(.anonymous).openSession(partition: partition)
    let received = Counter()
    let done = DispatchSemaphore(value: 0)
    let token = reader.changesets.subscribe { _ in if received.add() == changesets { done.signal() } }
    let start = ContinuousClock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for index in 0..<changesets {
            if index >= 64 { try await group.next() }
            group.addTask { try await writer.write(payload) }
        }
        try await group.waitForAll()
    }
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async {
            done.wait()
            continuation.resume()
        }
    }
    let elapsed = ContinuousClock.now - start
    token.invalidate()
    writer.suspend()
    reader.suspend()
    return milliseconds(elapsed) / Double(megabytes)
}

/// P12 once: `samples` 1 KiB writes at 100 per second; the latencies from `write` to the reader's
/// callback.
func p12(_ setup: Setup, partition: String) async throws -> [Duration] {
    let writer = try await app(setup.writer, "w-\(partition)").login(.anonymous).openSession(partition: partition)
    let reader = try await app(setup.reader, "r-\(partition)").login(.anonymous).openSession(partition: partition)
    try await reader.wait(for: .download)
    let latencies = Latencies()
    let done = DispatchSemaphore(value: 0)
    let token = reader.changesets.subscribe { changeset in
        let index = changeset.data.withUnsafeBytes { Int($0.loadUnaligned(as: UInt32.self)) }
        if latencies.arrived(index, at: ContinuousClock.now) == samples { done.signal() }
    }
    let clock = ContinuousClock()
    var next = clock.now
    for index in 0..<samples {
        next = next + .milliseconds(10)
        try await clock.sleep(until: next)
        var payload = Data(count: 1024)
        payload.withUnsafeMutableBytes { $0.storeBytes(of: UInt32(index), as: UInt32.self) }
        latencies.started(index)
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
    return latencies.values
}

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}

func quantile(_ values: [Duration], _ q: Double) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    return milliseconds(sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * q).rounded()))])
}

func format(_ value: Double) -> String { String(format: "%.2f", value) }

let runID = String(UInt32.random(in: 0...UInt32.max), radix: 36)
print("pg-bench: PostgreSQL at \(database); P8n \(megabytes) MB (median of \(repetitions)), P12 \(samples) samples")
print("")
print("P8n: 64 KiB changesets, 64 writes in flight, app → server → app over loopback WebSocket")
var p8nResults: [String: Double] = [:]
for kind in ["file", "pg1", "pg2"] {
    var runs: [Double] = []
    var name = ""
    for repetition in 0..<repetitions {
        let setup = try await setUp(kind)
        name = setup.name
        runs.append(try await p8n(setup, partition: "p8n-\(runID)-\(kind)-\(repetition)"))
        await setup.stop()
    }
    let median = runs.sorted()[runs.count / 2]
    p8nResults[kind] = median
    print(
        "  \(name.padding(toLength: 46, withPad: " ", startingAt: 0)) \(format(median)) ms per MB "
            + "(\(format(1000 / median)) MB/s; runs: \(runs.map(format).joined(separator: ", ")))")
}
if let file = p8nResults["file"], let one = p8nResults["pg1"], let two = p8nResults["pg2"] {
    print("  throughput relative to the file store: one front end \(format(file / one)), two \(format(file / two))")
}
print("")
print("P12: write on one app → changesets callback on another, 100 writes/s, 1 KiB")
for kind in ["file", "pg1", "pg2"] {
    let setup = try await setUp(kind)
    let latencies = try await p12(setup, partition: "p12-\(runID)-\(kind)")
    await setup.stop()
    print(
        "  \(setup.name.padding(toLength: 46, withPad: " ", startingAt: 0)) p50 \(format(quantile(latencies, 0.5))) ms   "
            + "p99 \(format(quantile(latencies, 0.99))) ms   (\(latencies.count) samples)")
}
try? FileManager.default.removeItem(at: root)
exit(0)
