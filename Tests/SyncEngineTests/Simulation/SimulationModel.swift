import Foundation
import SyncStreams
import TestSupport

/// What the simulation expects the system to hold: every changeset written, what became of the write,
/// and whether a fault may legitimately have lost it.
///
/// A changeset's bytes start with a tag (`"SIMW"`, its id as 4 bytes, its app and partition), so any
/// changeset found anywhere names the write it came from; the rest is seeded filler.
final class SimulationModel: Sendable {
    enum Outcome: Sendable, Hashable {
        /// `write` has not returned yet.
        case pending
        /// `write` returned: the changeset is durable locally and must reach the server exactly once.
        case durable
        /// `write` threw: the changeset may or may not have been stored, but never twice.
        case failed(String)
    }

    struct Write: Sendable {
        let id: UInt32
        let app: Int
        let partition: Int
        let data: Data
        var outcome: Outcome = .pending
        /// Why a fault may legitimately have lost it (`nil`: it must be on the server).
        var mayBeLost: String?
        /// A client reset of its writer replaced the store that held it while the server held it: it is no
        /// longer one of the writer's own changesets (at most a downloaded one), so only the server has it
        /// as a write to keep — a server restored from an older copy may lose it legitimately.
        var handedOver = false
    }

    private let state = Locked<(writes: [UInt32: Write], nextID: UInt32)>(([:], 1))

    static let tagLength = 10

    /// Records a new write of `bytes` bytes and returns its changeset.
    func newWrite(app: Int, partition: Int, bytes: Int, random: inout SeededGenerator) -> Write {
        let id = state.withLock { state -> UInt32 in
            defer { state.nextID += 1 }
            return state.nextID
        }
        var data = Data("SIMW".utf8)
        withUnsafeBytes(of: id.littleEndian) { data.append(contentsOf: $0) }
        data.append(UInt8(app))
        data.append(UInt8(partition))
        let filler = max(0, bytes - Self.tagLength)
        var bytes = [UInt8](repeating: 0, count: filler)
        var index = 0
        while index < filler {
            let word = random.next()
            withUnsafeBytes(of: word) { raw in
                for byte in raw where index < filler {
                    bytes[index] = byte
                    index += 1
                }
            }
        }
        data.append(contentsOf: bytes)
        let write = Write(id: id, app: app, partition: partition, data: data)
        state.withLock { $0.writes[id] = write }
        return write
    }

    /// The write a changeset came from, by its tag; `nil` for bytes the simulation never wrote.
    static func id(of data: Data) -> UInt32? {
        guard data.count >= tagLength, data.prefix(4) == Data("SIMW".utf8) else { return nil }
        let start = data.startIndex + 4
        return data[start..<start + 4].enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (8 * $1.offset) }
    }

    func finish(_ id: UInt32, _ outcome: Outcome) {
        state.withLock { $0.writes[id]?.outcome = outcome }
    }

    /// Marks the writes matching `condition` as possibly lost, for `reason`, unless already so marked.
    func allowLoss(_ reason: String, where condition: (Write) -> Bool) {
        state.withLock { state in
            for (id, write) in state.writes where write.mayBeLost == nil && condition(write) {
                state.writes[id]?.mayBeLost = reason
            }
        }
    }

    /// A client reset of `app`/`partition` finished: its writes that returned before it and that it did not
    /// carry over (`kept`: the reset's unsynced changes) were in the server's log, and are handed over.
    /// Writes still pending are not: they may be waiting for the reset, to land in the new store.
    func handOver(app: Int, partition: Int, keeping kept: Set<UInt32>) {
        state.withLock { state in
            for (id, write) in state.writes
            where write.app == app && write.partition == partition && write.outcome == .durable && !kept.contains(id) {
                state.writes[id]?.handedOver = true
            }
        }
    }

    var writes: [Write] { state.withLock { $0.writes.values.sorted { $0.id < $1.id } } }
    var pendingCount: Int { state.withLock { $0.writes.values.count { $0.outcome == .pending } } }
    func write(_ id: UInt32) -> Write? { state.withLock { $0.writes[id] } }
}
