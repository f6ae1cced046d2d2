// `combineLatest` of a stream that cannot fail (`Failure == Never`) with streams that can, or the other way
// round, so that a caller never writes `setFailureType(to:)`: for 2, 3 and 4 inputs, with and without a
// transform, one overload where this stream cannot fail and every other input fails with one error type,
// and one where this stream can fail and no other input can. Each applies `setFailureType(to:)` to the
// inputs that cannot fail.
//
// Other mixes (`progress.combineLatest(state, fetch)` where only `fetch` can fail) are not covered: reorder
// the inputs (`fetch.combineLatest(progress, state) { … }`) or apply `setFailureType(to:)`. Covering every
// mix takes 2ⁿ − 2 overloads per arity (44 in all); measured on this package, that made type-checking one
// mixed three- or four-input call with a closure take 0.1–1.3 s, against 3–9 ms with these 12.
//
// Each is `@_disfavoredOverload`: when every input cannot fail, both a plain overload (`CombineLatest.swift`)
// and one of these match, and the plain one (whose result is not wrapped in `SetFailureType`) must win
// without ambiguity.

extension SyncStream where Failure == Never {
    /// `combineLatest` of this stream and `other`: this stream cannot fail, `other` can.
    ///
    /// The inputs that cannot fail are given `setFailureType(to: Other.Failure.self)`; otherwise exactly
    /// `combineLatest(_:)`.
    @inlinable
    @_disfavoredOverload
    public func combineLatest<Other: SyncStream>(
        _ other: Other
    ) -> Streams.CombineLatest<Streams.SetFailureType<Self, Other.Failure>, Other> {
        Streams.CombineLatest(self.setFailureType(to: Other.Failure.self), other)
    }

    /// `combineLatest` of this stream and `other` with `transform`: this stream cannot fail, `other` can.
    ///
    /// The inputs that cannot fail are given `setFailureType(to: Other.Failure.self)`; otherwise exactly
    /// `combineLatest(_:)` with a transform.
    @inlinable
    @_disfavoredOverload
    public func combineLatest<Other: SyncStream, T: Sendable>(
        _ other: Other,
        _ transform: @escaping @Sendable (Output, Other.Output) -> T
    ) -> Streams.Map<Streams.CombineLatest<Streams.SetFailureType<Self, Other.Failure>, Other>, T> {
        Streams.CombineLatest(self.setFailureType(to: Other.Failure.self), other).map { transform($0.0, $0.1) }
    }

    /// `combineLatest` of three streams: this stream cannot fail, `b` and `c` can.
    ///
    /// The inputs that cannot fail are given `setFailureType(to: B.Failure.self)`; otherwise exactly
    /// `combineLatest(_:_:)`.
    @inlinable
    @_disfavoredOverload
    public func combineLatest<B: SyncStream, C: SyncStream>(
        _ b: B,
        _ c: C
    ) -> Streams.CombineLatest3<Streams.SetFailureType<Self, B.Failure>, B, C>
    where C.Failure == B.Failure {
        Streams.CombineLatest3(self.setFailureType(to: B.Failure.self), b, c)
    }

    /// `combineLatest` of three streams with `transform`: this stream cannot fail, `b` and `c` can.
    ///
    /// The inputs that cannot fail are given `setFailureType(to: B.Failure.self)`; otherwise exactly
    /// `combineLatest(_:_:)` with a transform.
    @inlinable
    @_disfavoredOverload
    public func combineLatest<B: SyncStream, C: SyncStream, T: Sendable>(
        _ b: B,
        _ c: C,
        _ transform: @escaping @Sendable (Output, B.Output, C.Output) -> T
    ) -> Streams.Map<Streams.CombineLatest3<Streams.SetFailureType<Self, B.Failure>, B, C>, T>
    where C.Failure == B.Failure {
        Streams.CombineLatest3(self.setFailureType(to: B.Failure.self), b, c).map { transform($0.0, $0.1, $0.2) }
    }

    /// `combineLatest` of four streams: this stream cannot fail, `b`, `c` and `d` can.
    ///
    /// The inputs that cannot fail are given `setFailureType(to: B.Failure.self)`; otherwise exactly
    /// `combineLatest(_:_:_:)`.
    @inlinable
    @_disfavoredOverload
    public func combineLatest<B: SyncStream, C: SyncStream, D: SyncStream>(
        _ b: B,
        _ c: C,
        _ d: D
    ) -> Streams.CombineLatest4<Streams.SetFailureType<Self, B.Failure>, B, C, D>
    where C.Failure == B.Failure, D.Failure == B.Failure {
        Streams.CombineLatest4(self.setFailureType(to: B.Failure.self), b, c, d)
    }

    /// `combineLatest` of four streams with `transform`: this stream cannot fail, `b`, `c` and `d` can.
    ///
    /// The inputs that cannot fail are given `setFailureType(to: B.Failure.self)`; otherwise exactly
    /// `combineLatest(_:_:_:)` with a transform.
    @inlinable
    @_disfavoredOverload
    public func combineLatest<B: SyncStream, C: SyncStream, D: SyncStream, T: Sendable>(
        _ b: B,
        _ c: C,
        _ d: D,
        _ transform: @escaping @Sendable (Output, B.Output, C.Output, D.Output) -> T
    ) -> Streams.Map<Streams.CombineLatest4<Streams.SetFailureType<Self, B.Failure>, B, C, D>, T>
    where C.Failure == B.Failure, D.Failure == B.Failure {
        Streams.CombineLatest4(self.setFailureType(to: B.Failure.self), b, c, d).map {
            transform($0.0, $0.1, $0.2, $0.3)
        }
    }
}

extension SyncStream {
    /// `combineLatest` of this stream and `other`: `other` cannot fail, this stream can.
    ///
    /// The inputs that cannot fail are given `setFailureType(to: Failure.self)`; otherwise exactly `combineLatest(_:)`.
    @inlinable
    @_disfavoredOverload
    public func combineLatest<Other: SyncStream>(
        _ other: Other
    ) -> Streams.CombineLatest<Self, Streams.SetFailureType<Other, Failure>>
    where Other.Failure == Never {
        Streams.CombineLatest(self, other.setFailureType(to: Failure.self))
    }

    /// `combineLatest` of this stream and `other` with `transform`: `other` cannot fail, this stream can.
    ///
    /// The inputs that cannot fail are given `setFailureType(to: Failure.self)`; otherwise exactly `combineLatest(_:)`
    /// with a transform.
    @inlinable
    @_disfavoredOverload
    public func combineLatest<Other: SyncStream, T: Sendable>(
        _ other: Other,
        _ transform: @escaping @Sendable (Output, Other.Output) -> T
    ) -> Streams.Map<Streams.CombineLatest<Self, Streams.SetFailureType<Other, Failure>>, T>
    where Other.Failure == Never {
        Streams.CombineLatest(self, other.setFailureType(to: Failure.self)).map { transform($0.0, $0.1) }
    }

    /// `combineLatest` of three streams: `b` and `c` cannot fail, this stream can.
    ///
    /// The inputs that cannot fail are given `setFailureType(to: Failure.self)`; otherwise exactly
    /// `combineLatest(_:_:)`.
    @inlinable
    @_disfavoredOverload
    public func combineLatest<B: SyncStream, C: SyncStream>(
        _ b: B,
        _ c: C
    ) -> Streams.CombineLatest3<Self, Streams.SetFailureType<B, Failure>, Streams.SetFailureType<C, Failure>>
    where B.Failure == Never, C.Failure == Never {
        Streams.CombineLatest3(self, b.setFailureType(to: Failure.self), c.setFailureType(to: Failure.self))
    }

    /// `combineLatest` of three streams with `transform`: `b` and `c` cannot fail, this stream can.
    ///
    /// The inputs that cannot fail are given `setFailureType(to: Failure.self)`; otherwise exactly
    /// `combineLatest(_:_:)` with a transform.
    @inlinable
    @_disfavoredOverload
    public func combineLatest<B: SyncStream, C: SyncStream, T: Sendable>(
        _ b: B,
        _ c: C,
        _ transform: @escaping @Sendable (Output, B.Output, C.Output) -> T
    )
        -> Streams.Map<
            Streams.CombineLatest3<Self, Streams.SetFailureType<B, Failure>, Streams.SetFailureType<C, Failure>>, T
        >
    where B.Failure == Never, C.Failure == Never {
        Streams.CombineLatest3(self, b.setFailureType(to: Failure.self), c.setFailureType(to: Failure.self)).map {
            transform($0.0, $0.1, $0.2)
        }
    }

    /// `combineLatest` of four streams: `b`, `c` and `d` cannot fail, this stream can.
    ///
    /// The inputs that cannot fail are given `setFailureType(to: Failure.self)`; otherwise exactly
    /// `combineLatest(_:_:_:)`.
    @inlinable
    @_disfavoredOverload
    public func combineLatest<B: SyncStream, C: SyncStream, D: SyncStream>(
        _ b: B,
        _ c: C,
        _ d: D
    )
        -> Streams.CombineLatest4<
            Self, Streams.SetFailureType<B, Failure>, Streams.SetFailureType<C, Failure>,
            Streams.SetFailureType<D, Failure>
        >
    where B.Failure == Never, C.Failure == Never, D.Failure == Never {
        Streams.CombineLatest4(
            self, b.setFailureType(to: Failure.self), c.setFailureType(to: Failure.self),
            d.setFailureType(to: Failure.self))
    }

    /// `combineLatest` of four streams with `transform`: `b`, `c` and `d` cannot fail, this stream can.
    ///
    /// The inputs that cannot fail are given `setFailureType(to: Failure.self)`; otherwise exactly
    /// `combineLatest(_:_:_:)` with a transform.
    @inlinable
    @_disfavoredOverload
    public func combineLatest<B: SyncStream, C: SyncStream, D: SyncStream, T: Sendable>(
        _ b: B,
        _ c: C,
        _ d: D,
        _ transform: @escaping @Sendable (Output, B.Output, C.Output, D.Output) -> T
    )
        -> Streams.Map<
            Streams.CombineLatest4<
                Self, Streams.SetFailureType<B, Failure>, Streams.SetFailureType<C, Failure>,
                Streams.SetFailureType<D, Failure>
            >, T
        >
    where B.Failure == Never, C.Failure == Never, D.Failure == Never {
        Streams.CombineLatest4(
            self, b.setFailureType(to: Failure.self), c.setFailureType(to: Failure.self),
            d.setFailureType(to: Failure.self)
        ).map { transform($0.0, $0.1, $0.2, $0.3) }
    }
}
