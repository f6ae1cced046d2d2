/// One progress report for one direction: how many bytes moved, out of how many, and an estimate.
///
/// - `transferrableBytes` is transferred + still pending.
/// - `progressEstimate` is in `0...1` and never NaN. Its meaning depends on the `ProgressMode` of the
///   stream that produced the value; a notifier reports exactly 1.0 only for a complete transfer.
/// - `fractionTransferred` is the plain ratio `transferredBytes / transferrableBytes`, clamped to `0...1`,
///   and 1 when `transferrableBytes == 0`.
/// - `isTransferComplete` is `transferredBytes >= transferrableBytes`.
///
/// ```swift
/// SyncProgress(transferredBytes: 50, transferrableBytes: 200, progressEstimate: 0.25)
/// // fractionTransferred 0.25, isTransferComplete false, description "50/200 bytes, estimate 0.25"
/// SyncProgress(transferredBytes: 0, transferrableBytes: 0, progressEstimate: .nan)
/// // progressEstimate 0.0, fractionTransferred 1.0, isTransferComplete true
/// ```
public struct SyncProgress: Sendable, Hashable, CustomStringConvertible {
    /// Bytes transferred so far.
    public let transferredBytes: Int
    /// Bytes transferred so far plus bytes still pending.
    public let transferrableBytes: Int
    /// How far the transfer has come, in `0...1`, never NaN; see `ProgressMode` for how streams compute it.
    public let progressEstimate: Double
    /// `transferredBytes / transferrableBytes` clamped to `0...1`; 1 when `transferrableBytes == 0`.
    public let fractionTransferred: Double
    /// Whether everything transferrable has been transferred: `transferredBytes >= transferrableBytes`.
    public let isTransferComplete: Bool

    /// A report with the given counts and estimate; `fractionTransferred` and `isTransferComplete` are
    /// computed from the counts.
    ///
    /// - Parameters:
    ///   - transferredBytes: Bytes transferred so far.
    ///   - transferrableBytes: Transferred plus pending bytes.
    ///   - progressEstimate: Clamped into `0...1`; NaN becomes 0.
    public init(transferredBytes: Int, transferrableBytes: Int, progressEstimate: Double) {
        self.transferredBytes = transferredBytes
        self.transferrableBytes = transferrableBytes
        self.progressEstimate = Self.clampedFraction(progressEstimate)
        self.fractionTransferred =
            transferrableBytes == 0
            ? 1 : Self.clampedFraction(Double(transferredBytes) / Double(transferrableBytes))
        self.isTransferComplete = transferredBytes >= transferrableBytes
    }

    /// `"50/200 bytes, estimate 0.25"`, with `", complete"` appended when the transfer is complete.
    public var description: String {
        "\(transferredBytes)/\(transferrableBytes) bytes, estimate \(progressEstimate)"
            + (isTransferComplete ? ", complete" : "")
    }

    /// `value` clamped into `0...1`, with NaN as 0.
    static func clampedFraction(_ value: Double) -> Double {
        guard !value.isNaN else { return 0 }
        return min(max(value, 0), 1)
    }

    /// `part / whole` for `0 <= part < whole`: in `0..<1` even when rounding to `Double` would make it 1,
    /// so that an estimate is exactly 1.0 only for a complete transfer.
    static func incompleteFraction(_ part: Int, of whole: Int) -> Double {
        min(clampedFraction(Double(part) / Double(whole)), 1.0.nextDown)
    }
}
