import Foundation
import SyncStreams
import TestSupport
import Testing

/// The off-pool helpers of TestSupport do what the rest of the suite relies on.
@Suite struct OffPoolTests {
    @Test("a test with the .offPool trait runs on a thread of its own", .offPool)
    func traitRunsTheTestOnItsOwnThread() {
        // The executor's thread is named after the test.
        #expect(DedicatedThread.current == "traitRunsTheTestOnItsOwnThread()")
    }

    @Test("offPool runs its body on a thread of its own and returns what it returns")
    func offPoolRunsOnItsOwnThread() async throws {
        let name = try await offPool("the thread's name") { DedicatedThread.current }
        #expect(name == "the thread's name")
        #expect(DedicatedThread.current == nil, "the test itself runs on the cooperative pool")
    }

    @Test("offPool names what it waited for when the body outlives its deadline")
    func offPoolTimesOut() async {
        let release = DispatchSemaphore(value: 0)
        await #expect {
            try await offPool("a body that never ends", seconds: 0.2) { _ = release.wait(timeout: .now() + 30) }
        } throws: { error in
            "\(error)".contains("waiting for a body that never ends")
        }
        release.signal()
    }

    @Test("waitUntil checks once more after its deadline, then names what it waited for")
    func waitUntilNamesWhatItWaitedFor() async {
        await #expect {
            try await waitUntil("a condition that never holds", seconds: 0.05) { false }
        } throws: { error in
            "\(error)".contains("timed out after") && "\(error)".contains("waiting for a condition that never holds")
        }
        let calls = Locked(0)
        // A condition that holds only on its last check, after the deadline, passes.
        try? await waitUntil("the last check", seconds: 0) {
            calls.withLock {
                $0 += 1
                return $0
            } >= 1
        }
        #expect(calls.withLock { $0 } == 1)
    }
}
