import SyncEngine
import TestSupport

/// The shape of a simulated world: how many apps, users and partitions, how long a run is.
struct SimulationShape: Sendable, Hashable {
    var appCount = 3
    var partitionCount = 2
    /// Operations (and faults) per run, before the final healing phase.
    var stepCount = 40
}

/// One operation or fault of a schedule. Apps and partitions are indices into the world.
enum SimulationStep: Sendable, Hashable, CustomStringConvertible {
    /// Writes a changeset of `bytes` bytes (a unique tag, then seeded filler) without waiting for it.
    case write(app: Int, partition: Int, bytes: Int)
    case suspend(app: Int, partition: Int)
    case resume(app: Int, partition: Int)
    /// Registers a `.forCurrentlyOutstandingWork` progress stream; it must end at 1.0.
    case registerOutstanding(app: Int, partition: Int, direction: ProgressDirection)
    /// Moves the virtual clock (and the server's wall clock) on.
    case advance(milliseconds: Int)
    case dropConnection(app: Int, afterMessages: Int)
    case restartServer(tornTail: Bool, rollback: Bool)
    case crashApp(app: Int, tornTail: SimulatedFileSystem.TornTail)
    case restartApp(app: Int, restoreBackup: Bool)
    case failWrites(app: Int, count: Int)
    case failNextSync(app: Int)
    /// The server store's next `count` writes fail with `ENOSPC` (`sync: false`) or its next `count` fsyncs
    /// with `EIO` (`sync: true`).
    case failServerStorage(sync: Bool, count: Int)
    /// Suspends the session, jumps the server's clock past the maximum offline time, resumes it.
    case expireClient(app: Int, partition: Int)
    /// Crashes and reopens the app after a storage failure, as a real app must (not a fault of its own).
    case restartAfterStorageFailure(app: Int)

    /// The fault kind this step injects, `nil` for an ordinary operation.
    var faultKinds: [FaultKind] {
        switch self {
        case .write, .suspend, .resume, .registerOutstanding, .advance, .restartAfterStorageFailure: []
        case .dropConnection: [.connectionDrop]
        case .restartServer(let torn, let rollback):
            [.serverRestart] + (torn ? [.serverTornTail] : []) + (rollback ? [.serverRollback] : [])
        case .crashApp(_, let torn):
            [.appCrash] + (torn == .cut ? [.appTornTail] : torn == .lostSector ? [.tornGroupCommit] : [])
        case .restartApp(_, let restore): [.appRestart] + (restore ? [.clientStoreRollback] : [])
        case .failWrites: [.enospc]
        case .failNextSync: [.fsyncFailure]
        case .failServerStorage: [.serverStorageFailure]
        case .expireClient: [.clientExpiry]
        }
    }

    var description: String {
        switch self {
        case .write(let app, let partition, let bytes): "write app\(app)/p\(partition) \(bytes) B"
        case .suspend(let app, let partition): "suspend app\(app)/p\(partition)"
        case .resume(let app, let partition): "resume app\(app)/p\(partition)"
        case .registerOutstanding(let app, let partition, let direction):
            "register \(direction) outstanding app\(app)/p\(partition)"
        case .advance(let milliseconds): "advance \(milliseconds) ms"
        case .dropConnection(let app, let messages): "drop app\(app)'s connections after \(messages) messages"
        case .restartServer(let torn, let rollback):
            "restart server" + (torn ? " with torn tails" : "") + (rollback ? " from an older copy" : "")
        case .crashApp(let app, let torn): "crash app\(app) (tail: \(torn))"
        case .restartApp(let app, let restore): "restart app\(app)" + (restore ? " from its backup" : "")
        case .failWrites(let app, let count): "ENOSPC on app\(app)'s next \(count) writes"
        case .failNextSync(let app): "fail app\(app)'s next fsync"
        case .failServerStorage(let sync, let count):
            sync ? "fail the server's next \(count) fsyncs" : "ENOSPC on the server's next \(count) writes"
        case .expireClient(let app, let partition): "expire app\(app)/p\(partition) on the server"
        case .restartAfterStorageFailure(let app): "restart app\(app) after its storage failure"
        }
    }
}

/// A seeded schedule: the same seed, shape and fault plan always give the same steps.
struct SimulationSchedule: Sendable {
    let seed: UInt64
    let steps: [SimulationStep]

    init(seed: UInt64, shape: SimulationShape, faults: FaultPlan) {
        self.seed = seed
        var random = SeededGenerator(seed: seed)
        var steps: [SimulationStep] = []
        // Each candidate: a weight and a maker; faults only when enabled.
        typealias Maker = (inout SeededGenerator) -> [SimulationStep]
        let apps = shape.appCount
        let partitions = shape.partitionCount
        var candidates: [(weight: Int, make: Maker)] = [
            (
                30,
                { random in
                    let roll = Int.random(in: 0..<100, using: &random)
                    let bytes =
                        roll < 70
                        ? Int.random(in: 16...2_000, using: &random)
                        : roll < 95
                            ? Int.random(in: 2_000...70_000, using: &random)
                            : Int.random(in: 70_000...300_000, using: &random)
                    return [
                        .write(
                            app: Int.random(in: 0..<apps, using: &random),
                            partition: Int.random(in: 0..<partitions, using: &random), bytes: bytes)
                    ]
                }
            ),
            (
                20,
                { random in [.advance(milliseconds: [10, 100, 1_000, 5_000].randomElement(using: &random)!)] }
            ),
            (
                6,
                { random in
                    let app = Int.random(in: 0..<apps, using: &random)
                    let partition = Int.random(in: 0..<partitions, using: &random)
                    return [.suspend(app: app, partition: partition)]
                }
            ),
            (
                6,
                { random in
                    [
                        .resume(
                            app: Int.random(in: 0..<apps, using: &random),
                            partition: Int.random(in: 0..<partitions, using: &random))
                    ]
                }
            ),
            (
                5,
                { random in
                    [
                        .registerOutstanding(
                            app: Int.random(in: 0..<apps, using: &random),
                            partition: Int.random(in: 0..<partitions, using: &random),
                            direction: Bool.random(using: &random) ? .upload : .download)
                    ]
                }
            ),
        ]
        if faults.contains(.connectionDrop) {
            candidates.append(
                (
                    6,
                    { random in
                        [
                            .dropConnection(
                                app: Int.random(in: 0..<apps, using: &random),
                                afterMessages: Int.random(in: 0..<12, using: &random))
                        ]
                    }
                ))
        }
        if faults.contains(.serverRestart) {
            candidates.append(
                (
                    2,
                    { random in
                        [
                            .restartServer(
                                tornTail: faults.contains(.serverTornTail) && Bool.random(using: &random),
                                rollback: faults.contains(.serverRollback) && Int.random(in: 0..<3, using: &random) == 0
                            )
                        ]
                    }
                ))
        }
        if faults.contains(.appCrash) {
            var tails: [SimulatedFileSystem.TornTail] = [.none]
            if faults.contains(.appTornTail) { tails.append(.cut) }
            if faults.contains(.tornGroupCommit) { tails.append(.lostSector) }
            candidates.append(
                (
                    3,
                    { [tails] random in
                        [
                            .crashApp(
                                app: Int.random(in: 0..<apps, using: &random),
                                tornTail: tails.randomElement(using: &random)!)
                        ]
                    }
                ))
        }
        if faults.contains(.appRestart) || faults.contains(.clientStoreRollback) {
            candidates.append(
                (
                    2,
                    { random in
                        let restore =
                            faults.contains(.clientStoreRollback)
                            && (!faults.contains(.appRestart) || Bool.random(using: &random))
                        return [.restartApp(app: Int.random(in: 0..<apps, using: &random), restoreBackup: restore)]
                    }
                ))
        }
        if faults.contains(.enospc) {
            candidates.append(
                (
                    2,
                    { random in
                        [
                            .failWrites(
                                app: Int.random(in: 0..<apps, using: &random),
                                count: Int.random(in: 1...3, using: &random))
                        ]
                    }
                ))
        }
        if faults.contains(.fsyncFailure) {
            // A poisoned store is fatal by design; the app restarts a little later, as a real one would.
            candidates.append(
                (
                    2,
                    { random in
                        let app = Int.random(in: 0..<apps, using: &random)
                        return [
                            .failNextSync(app: app),
                            .write(app: app, partition: Int.random(in: 0..<partitions, using: &random), bytes: 64),
                            .advance(milliseconds: 100),
                            .restartAfterStorageFailure(app: app),
                        ]
                    }
                ))
        }
        if faults.contains(.serverStorageFailure) {
            candidates.append(
                (
                    2,
                    { random in
                        [
                            .failServerStorage(
                                sync: Bool.random(using: &random), count: Int.random(in: 1...3, using: &random))
                        ]
                    }
                ))
        }
        if faults.contains(.clientExpiry) {
            candidates.append(
                (
                    2,
                    { random in
                        [
                            .expireClient(
                                app: Int.random(in: 0..<apps, using: &random),
                                partition: Int.random(in: 0..<partitions, using: &random))
                        ]
                    }
                ))
        }
        let total = candidates.reduce(0) { $0 + $1.weight }
        while steps.count < shape.stepCount {
            var pick = Int.random(in: 0..<total, using: &random)
            for candidate in candidates {
                if pick < candidate.weight {
                    steps += candidate.make(&random)
                    break
                }
                pick -= candidate.weight
            }
        }
        self.steps = steps
    }
}
