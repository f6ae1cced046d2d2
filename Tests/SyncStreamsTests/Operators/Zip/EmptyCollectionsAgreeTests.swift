import Testing

@testable import SyncStreams

/// `combineLatest([])` and `zip([])` agree (issue 22, item 7): both emit `[]` once, then finish — the
/// pinned design's promise for `combineLatest([])`.
@Suite struct EmptyCollectionsAgreeTests {
    func events<S: SyncStream>(_ stream: S) -> [String] where S.Output == [Int] {
        let events = LockedBox<[String]>([])
        let token = stream.subscribe(
            onValue: { value in events.mutate { $0.append("\(value)") } },
            onCompletion: { _ in events.mutate { $0.append("|") } }
        )
        token.invalidate()
        return events.value
    }

    @Test func zipAndCombineLatestOfNoStreamsBothEmitAnEmptyArrayThenFinish() {
        let none: [PassthroughSubject<Int, Never>] = []
        #expect(events(combineLatest(none)) == ["[]", "|"])
        #expect(events(zip(none)) == ["[]", "|"])
    }
}
