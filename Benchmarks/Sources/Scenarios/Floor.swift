/// The floor for P1: the same two closures (and a sink closure) called through non-inlined indirect
/// calls in a loop — what any push pipeline costs at least without a lock or a queue.
public enum FloorScenarios {
    public static let all: [Scenario] = [
        Scenario(
            id: "P1", title: "pumping: subject → map → filter → sink", library: "floor", unit: "value",
            count: Sizes.p1Values, run: { pumping($0) })
    ]

    @inline(never)
    public static func pumping(_ count: Int) -> Int {
        let accumulator = Accumulator()
        let sink: @Sendable (Int) -> Void = { accumulator.add($0) }
        loop(count, opaque(Stage.transform), opaque(Stage.isIncluded), opaque(sink))
        return accumulator.total
    }

    @inline(never)
    static func loop(
        _ count: Int, _ transform: @Sendable (Int) -> Int, _ isIncluded: @Sendable (Int) -> Bool,
        _ sink: @Sendable (Int) -> Void
    ) {
        for value in 0..<count {
            let mapped = transform(value)
            if isIncluded(mapped) { sink(mapped) }
        }
    }
}
