// `merge(with:)` of a stream that cannot fail (`Failure == Never`) and streams that can, either way round:
// the side that cannot fail is given `setFailureType(to:)`, so a caller never writes it.
//
// Both are `@_disfavoredOverload`: when every input cannot fail, the plain `merge(with:)` in `Merge.swift`
// matches too, and it (whose result is not wrapped in `SetFailureType`) must win without ambiguity.

extension SyncStream where Failure == Never {
    /// `merge(with:)` of this stream, which cannot fail, and `others`, which can.
    ///
    /// This stream is given `setFailureType(to: Other.Failure.self)`; otherwise exactly `merge(with:)`:
    /// values in arrival order, finished when every input finished, the first failure forwarded at once.
    ///
    /// ```
    /// self (Never):   1 - 3 - |
    /// others (E):     - 2 - - - #
    /// output (E):     1 2 3 - - #
    /// ```
    @_disfavoredOverload
    public func merge<Other: SyncStream>(
        with others: Other...
    ) -> Streams.Merge<Streams.SetFailureType<Self, Other.Failure>, Other> where Other.Output == Output {
        Streams.Merge(setFailureType(to: Other.Failure.self), others)
    }
}

extension SyncStream {
    /// `merge(with:)` of this stream, which can fail, and `others`, which cannot.
    ///
    /// Each of `others` is given `setFailureType(to: Failure.self)`; otherwise exactly `merge(with:)`:
    /// values in arrival order, finished when every input finished, this stream's failure forwarded at
    /// once.
    ///
    /// ```
    /// self (E):         1 - 3 - #
    /// others (Never):   - 2 - - - 4 |
    /// output (E):       1 2 3 - #
    /// ```
    @_disfavoredOverload
    public func merge<Other: SyncStream>(
        with others: Other...
    ) -> Streams.Merge<Self, Streams.SetFailureType<Other, Failure>>
    where Other.Output == Output, Other.Failure == Never {
        Streams.Merge(self, others.map { $0.setFailureType(to: Failure.self) })
    }
}
