import Foundation
import Testing

/// `sync-spinner --log-level` as a real subprocess (helpers from `SpinnerProcessTests.swift`).
@Suite("sync-spinner --log-level", .timeLimit(.minutes(5)))
struct SpinnerLogLevelTests {
    @Test("--log-level info: the engine's and the embedded server's info lines reach stderr, and the run succeeds")
    func infoLinesOnStandardError() async throws {
        let run = try await SpinnerProcess.run(["--log-level", "info", "--changesets", "3", "--size", "3000"])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stderr.split(separator: "\n")
        #expect(lines.contains { $0.contains(" info sync.client.connection: connecting to ") }, "\(run.stderr)")
        #expect(lines.contains { $0.contains(" info sync.client.connection: connected to ") })
        #expect(lines.contains { $0.contains(" info sync.server: connection ") && $0.contains(" welcomed as ") })
        #expect(!lines.contains { $0.contains(" debug ") })
        #expect(run.stdout.contains("the reader holds exactly what the writer wrote"))
    }

    @Test("at the default level (warn) a successful run logs nothing")
    func quietByDefault() async throws {
        let run = try await SpinnerProcess.run(["--changesets", "3", "--size", "3000"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(!run.stderr.contains("sync.client") && !run.stderr.contains("sync.server"), "\(run.stderr)")
    }
}
