import Testing

@testable import SyncSpinnerKit

@Suite("Workload")
struct WorkloadTests {
    @Test(
        "the default workload: 200 changesets of 1 KiB … 256 KiB adding up to exactly 8 MB, really mixed",
        arguments: [1, 2, 3, 42, 2024, 0xDEAD_BEEF] as [UInt64])
    func defaultWorkload(seed: UInt64) {
        let workload = Workload(count: 200, totalBytes: 8_000_000, seed: seed)
        #expect(workload.count == 200)
        #expect(workload.totalBytes == 8_000_000, "seed \(seed)")
        #expect(workload.sizes.allSatisfy { (1024...262_144).contains($0) }, "seed \(seed): \(workload.sizes)")
        // Mixed: small ones near 1 KiB and large ones past 128 KiB, and a spread between them.
        let sorted = workload.sizes.sorted()
        #expect(sorted.first! < 2048, "seed \(seed)")
        #expect(sorted.last! > 131_072, "seed \(seed)")
        #expect(sorted[150] > 4 * sorted[50], "seed \(seed)")
    }

    @Test("the same seed gives the same sizes and bytes; another seed others")
    func seeded() {
        let first = Workload(count: 200, totalBytes: 8_000_000, seed: 7)
        let again = Workload(count: 200, totalBytes: 8_000_000, seed: 7)
        let other = Workload(count: 200, totalBytes: 8_000_000, seed: 8)
        #expect(first.sizes == again.sizes)
        #expect(first.changeset(3) == again.changeset(3))
        #expect(first.sizes != other.sizes)
        #expect(first.changeset(3).count == first.sizes[3])
        #expect(first.changeset(3) != first.changeset(4).prefix(first.sizes[3]))
    }

    static let workloadShapes: [(count: Int, total: Int)] = [
        (1, 1), (3, 3), (10, 5_000), (20, 200_000), (50, 2_000_000), (5, 8_000_000), (7, 1_000_000),
        (1000, 8_000_000), (20_000, 20_000), (2, 600_000),
    ]

    @Test("any shape: exactly the total, every size within the bounds for its average", arguments: workloadShapes)
    func shapes(count: Int, total: Int) {
        let bounds = Workload.sizeBounds(count: count, totalBytes: total)
        #expect(bounds.lowerBound * count <= total && total <= bounds.upperBound * count)
        for seed in [1, 99] as [UInt64] {
            let workload = Workload(count: count, totalBytes: total, seed: seed)
            #expect(workload.count == count)
            #expect(workload.totalBytes == total, "\(count) × \(total), seed \(seed)")
            #expect(workload.sizes.allSatisfy { bounds.contains($0) }, "\(count) × \(total), seed \(seed)")
        }
    }

    @Test("the bounds: 1 KiB … 256 KiB, widened only when the average leaves them")
    func bounds() {
        #expect(Workload.sizeBounds(count: 200, totalBytes: 8_000_000) == 1024...262_144)
        #expect(Workload.sizeBounds(count: 10, totalBytes: 5_000) == 125...262_144)
        #expect(Workload.sizeBounds(count: 3, totalBytes: 3) == 1...262_144)
        #expect(Workload.sizeBounds(count: 5, totalBytes: 8_000_000) == 1024...1_600_000)
        #expect(Workload.sizeBounds(count: 2, totalBytes: 600_001) == 1024...300_001)
    }
}
