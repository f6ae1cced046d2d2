import Testing

@testable import SyncStreams

@Suite struct MarbleTests {
    @Test func parsesTicksValuesCompletionsAndGroups() {
        let tick = Marble.tick
        #expect(
            Marble.parse("-a-(bc|)")
                == [
                    TimedEvent(time: tick, event: .value("a")),
                    TimedEvent(time: tick * 3, event: .value("b")),
                    TimedEvent(time: tick * 3, event: .value("c")),
                    TimedEvent(time: tick * 3, event: .finished),
                ])
        #expect(Marble.parse("--#") == [TimedEvent(time: tick * 2, event: .failure(MarbleError()))])
    }

    @Test func runReplaysTheInputAtItsTimes() {
        #expect(Marble.run("a--b-#") { subject, _ in subject } == Marble.parse("a--b-#"))
    }
}
