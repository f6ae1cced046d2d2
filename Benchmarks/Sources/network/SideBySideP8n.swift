import Dispatch
import Foundation
import SyncEngine

/// P8n against a server process: one app writes `megabytes` MiB as 64 KiB changesets keeping
/// `writesInFlight` writes in flight, another app receives them all; MiB/s from the first write to the
/// last changeset received. The apps have durable stores of their own (as in `EngineScenarios.embeddedSync`).
enum SideBySideP8n {
    static func mebibytesPerSecond(
        server: ServerProcess, megabytes: Int, writesInFlight: Int
    ) async throws
        -> Double
    {
        let changesets = megabytes * 16
        let payload = Data(repeating: 0xA5, count: 64 * 1024)
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("P8n-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let endpoint = SyncEndpoint.webSocket(host: "127.0.0.1", port: server.port)
        let writer = try await SyncApp(
            configuration: .init(server: endpoint, directory: root.appendingPathComponent("writer"), logLevel: .warn)
        ).login(.anonymous).openSession(partition: "p8n")
        let reader = try await SyncApp(
            configuration: .init(server: endpoint, directory: root.appendingPathComponent("reader"), logLevel: .warn)
        ).login(.anonymous).openSession(partition: "p8n")
        let receivedAll = DispatchSemaphore(value: 0)
        let received = Locked(0)
        let token = reader.changesets.subscribe { _ in
            if received.withLock({
                $0 += 1
                return $0
            }) == changesets {
                receivedAll.signal()
            }
        }
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<changesets {
                if index >= writesInFlight { try await group.next() }
                group.addTask { try await writer.write(payload) }
            }
            try await group.waitForAll()
        }
        let arrived = await onOwnThread(deadline: .seconds(300)) { () -> Bool in
            receivedAll.wait()
            return true
        }
        let elapsed = ContinuousClock.now - start
        token.invalidate()
        writer.suspend()
        reader.suspend()
        guard arrived != nil else {
            throw ServerProcess.StartFailed(
                description: "only \(received.withLock { $0 }) of \(changesets) changesets arrived in 300 s")
        }
        return Double(megabytes) / (milliseconds(elapsed) / 1000)
    }
}
