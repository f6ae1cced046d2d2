import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `ChildProcess`, which every subprocess test (servers, the spinner, curl) relies on to see its child's exit.
@Suite struct ChildProcessTests {
    #if os(Linux)
        @Test(
            "children started from two threads at once hold only their own output pipes, so each one's exit is seen when it exits"
        )
        func childrenStartedAtOnceInheritNothingOfEachOther() async throws {
            // Before ChildProcess started one child at a time, a child started while another thread was making
            // its pipes inherited them (here in each of 5 runs): the other child's output then did not end, and
            // its exit was not seen, until this one ended too. Without the fix the kills below time out too.
            let sleep = URL(fileURLWithPath: "/bin/sleep")
            async let first = offPool("50 children started on one thread") {
                try (0..<50).map { _ in try ChildProcess(sleep, ["120"]) }
            }
            async let second = offPool("50 children started on another thread") {
                try (0..<50).map { _ in try ChildProcess(sleep, ["120"]) }
            }
            let children = try await first + second
            let inherited = try await offPool("each child's descriptors read from /proc") {
                let held = children.map { Self.descriptors(of: $0.processIdentifier) }
                // A pipe or socket that two children hold was inherited by one of them: every child's own
                // (its output pipes, and the socket Foundation watches for its exit) is its alone.
                var holders: [String: Int] = [:]
                for descriptors in held {
                    for target in Set(descriptors.values) where target.hasPrefix("pipe:") || target.hasPrefix("socket:")
                    {
                        holders[target, default: 0] += 1
                    }
                }
                return zip(children, held).compactMap { child, descriptors -> String? in
                    let ownPipes = [1, 2].allSatisfy { descriptors[$0]?.hasPrefix("pipe:") == true }
                    let shared = descriptors.values.filter { holders[$0, default: 0] > 1 }
                    guard !ownPipes || !shared.isEmpty else { return nil }
                    return "child \(child.processIdentifier): \(descriptors), shared \(shared)"
                }
            }
            #expect(inherited.isEmpty, "\(inherited.count) of 100 lack their own pipes or hold another's: \(inherited)")
            for child in children {
                #expect(try await child.stop(SIGKILL, deadline: .seconds(30)) == SIGKILL)
            }
        }

        /// Each open descriptor of process `pid` and what it refers to (`pipe:[…]`, `socket:[…]`, a path).
        private static func descriptors(of pid: Int32) -> [Int: String] {
            let directory = "/proc/\(pid)/fd"
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            var result: [Int: String] = [:]
            for name in names {
                guard let number = Int(name),
                    let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\(name)")
                else { continue }
                result[number] = target
            }
            return result
        }
    #endif
}
