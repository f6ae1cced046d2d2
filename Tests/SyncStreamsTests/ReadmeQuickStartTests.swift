import SyncStreams
import Testing

/// The README's quick start, verbatim where possible, with its printed lines recorded and checked, so the
/// documentation cannot drift from the API.
@Suite struct ReadmeQuickStartTests {
    @Test func quickStartBehavesAsDocumented() async throws {
        let printed = Recorder<String, Never>()
        let print: @Sendable (String) -> Void = { printed.record(.value($0)) }

        let uploaded = CurrentValueSubject<Int, Never>(0)
        let total = 1_000

        let token =
            uploaded
            .map { Double($0) / Double(total) }
            .removeDuplicates()
            .subscribe { fraction in print("upload \(Int(fraction * 100)) %") }

        uploaded.value = 250
        uploaded.send(1_000)
        token.invalidate()
        uploaded.send(500)
        #expect(printed.values == ["upload 0 %", "upload 25 %", "upload 100 %"])

        var tokens = Set<SubscriptionToken>()
        uploaded.subscribe { print("\($0)") }.store(in: &tokens)
        #expect(printed.values.last == "500")
        tokens.removeAll()

        let connection = CurrentValueSubject<String, Never>("disconnected")
        let state = StateStream(connection)
        #expect(state.value == "disconnected")

        let first = try await uploaded.first()
        #expect(first == 500)

        let executor = TestExecutor()
        let throttled = uploaded.throttle(for: .milliseconds(100), on: executor, latest: true)
        let t = throttled.subscribe { print("throttled \($0)") }
        #expect(printed.values.last == "500")
        executor.advance(by: .milliseconds(100))
        #expect(printed.values.last == "throttled 500")
        t.invalidate()
    }
}
