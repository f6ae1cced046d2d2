import Foundation
import SyncServer
import SyncWire

/// The end-of-run invariants, as a pure function of what the run left: the model's writes, the server's
/// logs, and what each live session received. Each returned string is one violation.
enum InvariantChecker {
    /// One live session at the end of the run.
    struct SessionView {
        let name: String
        let partition: Int
        let changesets: [UInt64: Data]
        let outstanding: [SessionObserver.Outstanding]
        let isInvalid: Bool
        let lastError: String?
    }

    static func check(
        writes: [SimulationModel.Write], serverLogs: [Int: [StoredChangeset]], sessions: [SessionView]
    ) -> [String] {
        var violations: [String] = []
        let writesByID = Dictionary(uniqueKeysWithValues: writes.map { ($0.id, $0) })

        // The server's logs: versions 1, 2, 3, …; every changeset one the simulation wrote, to that
        // partition, and there once.
        var found: [UInt32: Int] = [:]
        for (partition, log) in serverLogs.sorted(by: { $0.key < $1.key }) {
            for (index, stored) in log.enumerated() {
                if stored.serverVersion != UInt64(index + 1) {
                    violations.append("server p\(partition): entry \(index) has version \(stored.serverVersion)")
                }
                // A duplicate entry (an origin integrated before, recovered again by a client reset) only
                // acknowledges its upload: it must hold the bytes of the entry it names, and integrates nothing.
                if let original = stored.duplicateOf {
                    let held = original >= 1 && original < stored.serverVersion ? log[Int(original - 1)] : nil
                    if held?.data != stored.data || held?.effectiveOrigin != stored.effectiveOrigin {
                        violations.append(
                            "server p\(partition) v\(stored.serverVersion): a duplicate of v\(original), which holds "
                                + "another changeset")
                    }
                    continue
                }
                guard let id = SimulationModel.id(of: Data(stored.data)), let write = writesByID[id] else {
                    violations.append("server p\(partition) v\(stored.serverVersion): a changeset nobody wrote")
                    continue
                }
                if write.partition != partition {
                    violations.append(
                        "server p\(partition) v\(stored.serverVersion): write \(id) of p\(write.partition)")
                }
                if Data(stored.data) != write.data {
                    violations.append("server p\(partition) v\(stored.serverVersion): write \(id)'s bytes differ")
                }
                found[id, default: 0] += 1
                if found[id] == 2 {
                    violations.append(
                        "server p\(partition): write \(id) is in the log twice (v\(stored.serverVersion))")
                }
            }
        }

        // Every write that returned is on the server, unless a fault may legitimately have lost it.
        for write in writes where found[write.id] == nil && write.mayBeLost == nil {
            switch write.outcome {
            case .durable:
                violations.append(
                    "write \(write.id) (app\(write.app)/p\(write.partition), \(write.data.count) B) returned but "
                        + "never reached the server")
            case .pending:
                violations.append("write \(write.id) (app\(write.app)/p\(write.partition)) never returned")
            case .failed:
                break
            }
        }

        // Every live session converged to its partition's log, byte for byte; its progress registrations
        // ended at 1.0; it is not invalid.
        for session in sessions {
            let log = serverLogs[session.partition] ?? []
            if session.isInvalid {
                violations.append("\(session.name) is invalid at the end (\(session.lastError ?? "no error reported"))")
                continue
            }
            // At a duplicate entry a session holds its bytes if its client file uploaded it (or a reset continued
            // that store), and an empty changeset otherwise.
            var expected = Dictionary(uniqueKeysWithValues: log.map { ($0.serverVersion, Data($0.data)) })
            for stored in log where stored.duplicateOf != nil && session.changesets[stored.serverVersion] == Data() {
                expected[stored.serverVersion] = Data()
            }
            if session.changesets != expected {
                let missing = expected.keys.filter { session.changesets[$0] == nil }.count
                let extra = session.changesets.keys.filter { expected[$0] == nil }.count
                let differing = expected.filter { version, bytes in
                    session.changesets[version].map { $0 != bytes } ?? false
                }
                violations.append(
                    "\(session.name) did not converge to the server's \(log.count) changesets: \(missing) missing, "
                        + "\(extra) the server does not have, \(differing.count) with other bytes"
                        + (differing.isEmpty ? "" : " (versions \(differing.keys.sorted()))"))
            }
            for (index, registration) in session.outstanding.enumerated() {
                let last = registration.values.last
                if !registration.finished || last?.progressEstimate != 1 || last?.isTransferComplete != true {
                    violations.append(
                        "\(session.name): outstanding \(registration.direction) registration #\(index) ended at "
                            + "\(last.map { "\($0)" } ?? "nothing") (finished: \(registration.finished))")
                }
            }
        }
        return violations
    }
}
