import Testing

@testable import SyncEngine

@Suite("SyncProgress")
struct SyncProgressTests {
    @Test("init keeps the counts and the estimate, and computes fraction and completeness")
    func computesDerivedFields() {
        let value = SyncProgress(transferredBytes: 50, transferrableBytes: 200, progressEstimate: 0.3)
        #expect(value.transferredBytes == 50)
        #expect(value.transferrableBytes == 200)
        #expect(value.progressEstimate == 0.3)
        #expect(value.fractionTransferred == 0.25)
        #expect(!value.isTransferComplete)
    }

    @Test("6. init: a NaN estimate becomes 0")
    func nanEstimateBecomesZero() {
        #expect(SyncProgress(transferredBytes: 1, transferrableBytes: 2, progressEstimate: .nan).progressEstimate == 0)
    }

    @Test(
        "6. init: the estimate is clamped into 0...1",
        arguments: [(-1.0, 0.0), (-.infinity, 0), (1.5, 1), (.infinity, 1)])
    func estimateIsClamped(input: Double, expected: Double) {
        #expect(
            SyncProgress(transferredBytes: 1, transferrableBytes: 2, progressEstimate: input).progressEstimate
                == expected)
    }

    @Test("6. fractionTransferred is 1 when transferrable is 0, and complete")
    func emptyTransferIsComplete() {
        let value = SyncProgress(transferredBytes: 0, transferrableBytes: 0, progressEstimate: 0)
        #expect(value.fractionTransferred == 1)
        #expect(value.isTransferComplete)
    }

    @Test("6. fractionTransferred is clamped to 1 when transferred exceeds transferrable")
    func overTransferIsClamped() {
        let value = SyncProgress(transferredBytes: 300, transferrableBytes: 200, progressEstimate: 1)
        #expect(value.fractionTransferred == 1)
        #expect(value.isTransferComplete)
    }

    @Test("6. fractionTransferred is in 0...1 and not NaN near Int.max")
    func hugeCounts() {
        let value = SyncProgress(transferredBytes: Int.max - 1, transferrableBytes: Int.max, progressEstimate: 0.5)
        #expect(!value.fractionTransferred.isNaN)
        #expect((0...1).contains(value.fractionTransferred))
        #expect(!value.isTransferComplete)
    }

    @Test("isTransferComplete is transferred >= transferrable")
    func completeness() {
        #expect(progress(100, 100, 1).isTransferComplete)
        #expect(!progress(99, 100, 0.99).isTransferComplete)
    }

    @Test("description shows counts, estimate and completeness")
    func describesItself() {
        #expect(progress(50, 200, 0.25).description == "50/200 bytes, estimate 0.25")
        #expect(progress(200, 200, 1).description == "200/200 bytes, estimate 1.0, complete")
    }

    @Test("Hashable: equal fields are equal")
    func equality() {
        #expect(progress(1, 2, 0.5) == progress(1, 2, 0.5))
        #expect(progress(1, 2, 0.5) != progress(1, 3, 0.5))
        #expect(Set([progress(1, 2, 0.5), progress(1, 2, 0.5)]).count == 1)
    }

    @Test("incompleteFraction stays below 1 even when Double rounding would make it 1")
    func incompleteFractionBelowOne() {
        let fraction = SyncProgress.incompleteFraction(Int.max - 1, of: Int.max)
        #expect(fraction < 1)
        #expect(fraction > 0.99)
    }
}
