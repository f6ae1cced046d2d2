import Testing

@testable import SyncStreams

/// When `zip` ends, the values the other inputs had buffered are released at once, not when the
/// subscription is (issue 22, item 7).
@Suite struct ZipReleasesBuffersTests {
    @Test func zipReleasesTheOtherInputsBufferedValuesWhenItEnds() {
        let first = PassthroughSubject<LifetimeCanary, Never>()
        let second = PassthroughSubject<Int, Never>()
        weak var buffered: LifetimeCanary?
        let completions = AtomicCounter()
        let token = first.zip(second).subscribe(
            onValue: { _ in },
            onCompletion: { _ in completions.increment() }
        )
        do {
            let canary = LifetimeCanary()
            buffered = canary
            first.send(canary)
        }
        #expect(buffered != nil, "zip buffers the first input's value while the second has none")
        second.send(completion: .finished)
        #expect(completions.value == 1, "zip finished: the second input finished with nothing buffered")
        #expect(buffered == nil, "the first input's buffered value is released when zip ends")
        token.invalidate()
    }

    @Test func zipOfACollectionReleasesBufferedValuesWhenItEnds() {
        let first = PassthroughSubject<LifetimeCanary, Never>()
        let second = PassthroughSubject<LifetimeCanary, Never>()
        weak var buffered: LifetimeCanary?
        let token = zip([first, second]).subscribe { _ in }
        do {
            let canary = LifetimeCanary()
            buffered = canary
            first.send(canary)
        }
        second.send(completion: .finished)
        #expect(buffered == nil, "the first input's buffered value is released when zip ends")
        token.invalidate()
    }
}
