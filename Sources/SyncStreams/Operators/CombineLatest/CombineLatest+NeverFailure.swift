// `combineLatest` over inputs of which some cannot fail (`Failure == Never`) and the others fail with one
// error type: each overload applies `setFailureType(to:)` to the inputs that cannot fail, so a caller never
// writes it. One overload per arity (2, 3, 4), with and without a transform, and per choice of the inputs
// that cannot fail (every mix but "none" and "all", which the plain overloads in `CombineLatest.swift`
// take) — so `progress.combineLatest(connectionState, fetch)` compiles whichever of them can fail.
//
// Each is `@_disfavoredOverload`: when every input cannot fail, both a plain overload and these match, and
// the plain one (whose result is not wrapped in `SetFailureType`) must win without ambiguity.

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

    /// `combineLatest` of three streams: this stream and `b` cannot fail, `c` can.
    ///
    /// The inputs that cannot fail are given `setFailureType(to: C.Failure.self)`; otherwise exactly
    /// `combineLatest(_:_:)`.
    @inlinable
    @_disfavoredOverload
    public func combineLatest<B: SyncStream, C: SyncStream>(
        _ b: B,
        _ c: C
    ) -> Streams.CombineLatest3<Streams.SetFailureType<Self, C.Failure>, Streams.SetFailureType<B, C.Failure>, C>
    where B.Failure == Never {
        Streams.CombineLatest3(self.setFailureType(to: C.Failure.self), b.setFailureType(to: C.Failure.self), c)
    }

    /// `combineLatest` of three streams: this stream and `c` cannot fail, `b` can.
    ///
    /// The inputs that cannot fail are given `setFailureType(to: B.Failure.self)`; otherwise exactly
    /// `combineLatest(_:_:)`.
    @inlinable
    @_disfavoredOverload
    public func combineLatest<B: SyncStream, C: SyncStream>(
        _ b: B,
        _ c: C
    ) -> Streams.CombineLatest3<Streams.SetFailureType<Self, B.Failure>, B, Streams.SetFailureType<C, B.Failure>>
    where C.Failure == Never {
        Streams.CombineLatest3(self.setFailureType(to: B.Failure.self), b, c.setFailureType(to: B.Failure.self))
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

    /// `combineLatest` of three streams with `transform`: this stream and `b` cannot fail, `c` can.
    ///
    /// The inputs that cannot fail are given `setFailureType(to: C.Failure.self)`; otherwise exactly
    /// `combineLatest(_:_:)` with a transform.
    @inlinable
    @_disfavoredOverload
    public func combineLatest<B: SyncStream, C: SyncStream, T: Sendable>(
        _ b: B,
        _ c: C,
        _ transform: @escaping @Sendable (Output, B.Output, C.Output) -> T
    )
        -> Streams.Map<
            Streams.CombineLatest3<Streams.SetFailureType<Self, C.Failure>, Streams.SetFailureType<B, C.Failure>, C>, T
        >
    where B.Failure == Never {
        Streams.CombineLatest3(self.setFailureType(to: C.Failure.self), b.setFailureType(to: C.Failure.self), c).map {
            transform($0.0, $0.1, $0.2)
        }
    }

    /// `combineLatest` of three streams with `transform`: this stream and `c` cannot fail, `b` can.
    ///
    /// The inputs that cannot fail are given `setFailureType(to: B.Failure.self)`; otherwise exactly
    /// `combineLatest(_:_:)` with a transform.
    @inlinable
    @_disfavoredOverload
    public func combineLatest<B: SyncStream, C: SyncStream, T: Sendable>(
        _ b: B,
        _ c: C,
        _ transform: @escaping @Sendable (Output, B.Output, C.Output) -> T
    )
        -> Streams.Map<
            Streams.CombineLatest3<Streams.SetFailureType<Self, B.Failure>, B, Streams.SetFailureType<C, B.Failure>>, T
        >
    where C.Failure == Never {
        Streams.CombineLatest3(self.setFailureType(to: B.Failure.self), b, c.setFailureType(to: B.Failure.self)).map {
            transform($0.0, $0.1, $0.2)
        }
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

    /// `combineLatest` of four streams: this stream, `b` and `c` cannot fail, `d` can.
    ///
    /// The inputs that cannot fail are given `setFailureType(to: D.Failure.self)`; otherwise exactly
    /// `combineLatest(_:_:_:)`.
    @inlinable
    @_disfavoredOverload
    public func combineLatest<B: SyncStream, C: SyncStream, D: SyncStream>(
        _ b: B,
        _ c: C,
        _ d: D
    )
        -> Streams.CombineLatest4<
            Streams.SetFailureType<Self, D.Failure>, Streams.SetFailureType<B, D.Failure>,
            Streams.SetFailureType<C, D.Failure>, D
        >
    where B.Failure == Never, C.Failure == Never {
        Streams.CombineLatest4(
            self.setFailureType(to: D.Failure.self), b.setFailureType(to: D.Failure.self),
            c.setFailureType(to: D.Failure.self), d)
    }

    /// `combineLatest` of four streams: this stream, `b` and `d` cannot fail, `c` can.
    ///
    /// The inputs that cannot fail are given `setFailureType(to: C.Failure.self)`; otherwise exactly
    /// `combineLatest(_:_:_:)`.
    @inlinable
    @_disfavoredOverload
    public func combineLatest<B: SyncStream, C: SyncStream, D: SyncStream>(
        _ b: B,
        _ c: C,
        _ d: D
    )
        -> Streams.CombineLatest4<
            Streams.SetFailureType<Self, C.Failure>, Streams.SetFailureType<B, C.Failure>, C,
            Streams.SetFailureType<D, C.Failure>
        >
    where B.Failure == Never, D.Failure == Never {
        Streams.CombineLatest4(
            self.setFailureType(to: C.Failure.self), b.setFailureType(to: C.Failure.self), c,
            d.setFailureType(to: C.Failure.self))
    }

    /// `combineLatest` of four streams: this stream and `b` cannot fail, `c` and `d` can.
    ///
    /// The inputs that cannot fail are given `setFailureType(to: C.Failure.self)`; otherwise exactly
    /// `combineLatest(_:_:_:)`.
    @inlinable
    @_disfavoredOverload
    public func combineLatest<B: SyncStream, C: SyncStream, D: SyncStream>(
        _ b: B,
        _ c: C,
        _ d: D
    ) -> Streams.CombineLatest4<Streams.SetFailureType<Self, C.Failure>, Streams.SetFailureType<B, C.Failure>, C, D>
    where B.Failure == Never, D.Failure == C.Failure {
        Streams.CombineLatest4(self.setFailureType(to: C.Failure.self), b.setFailureType(to: C.Failure.self), c, d)
    }

    /// `combineLatest` of four streams: this stream, `c` and `d` cannot fail, `b` can.
    ///
    /// The inputs that cannot fail are given `setFailureType(to: B.Failure.self)`; otherwise exactly
    /// `combineLatest(_:_:_:)`.
    @inlinable
    @_disfavoredOverload
    public func combineLatest<B: SyncStream, C: SyncStream, D: SyncStream>(
        _ b: B,
        _ c: C,
        _ d: D
    )
        -> Streams.CombineLatest4<
            Streams.SetFailureType<Self, B.Failure>, B, Streams.SetFailureType<C, B.Failure>,
            Streams.SetFailureType<D, B.Failure>
        >
    where C.Failure == Never, D.Failure == Never {
        Streams.CombineLatest4(
            self.setFailureType(to: B.Failure.self), b, c.setFailureType(to: B.Failure.self),
            d.setFailureType(to: B.Failure.self))
    }

    /// `combineLatest` of four streams: this stream and `c` cannot fail, `b` and `d` can.
    ///
    /// The inputs that cannot fail are given `setFailureType(to: B.Failure.self)`; otherwise exactly
    /// `combineLatest(_:_:_:)`.
    @inlinable
    @_disfavoredOverload
    public func combineLatest<B: SyncStream, C: SyncStream, D: SyncStream>(
        _ b: B,
        _ c: C,
        _ d: D
    ) -> Streams.CombineLatest4<Streams.SetFailureType<Self, B.Failure>, B, Streams.SetFailureType<C, B.Failure>, D>
    where C.Failure == Never, D.Failure == B.Failure {
        Streams.CombineLatest4(self.setFailureType(to: B.Failure.self), b, c.setFailureType(to: B.Failure.self), d)
    }

    /// `combineLatest` of four streams: this stream and `d` cannot fail, `b` and `c` can.
    ///
    /// The inputs that cannot fail are given `setFailureType(to: B.Failure.self)`; otherwise exactly
    /// `combineLatest(_:_:_:)`.
    @inlinable
    @_disfavoredOverload
    public func combineLatest<B: SyncStream, C: SyncStream, D: SyncStream>(
        _ b: B,
        _ c: C,
        _ d: D
    ) -> Streams.CombineLatest4<Streams.SetFailureType<Self, B.Failure>, B, C, Streams.SetFailureType<D, B.Failure>>
    where C.Failure == B.Failure, D.Failure == Never {
        Streams.CombineLatest4(self.setFailureType(to: B.Failure.self), b, c, d.setFailureType(to: B.Failure.self))
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

    /// `combineLatest` of four streams with `transform`: this stream, `b` and `c` cannot fail, `d` can.
    ///
    /// The inputs that cannot fail are given `setFailureType(to: D.Failure.self)`; otherwise exactly
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
                Streams.SetFailureType<Self, D.Failure>, Streams.SetFailureType<B, D.Failure>,
                Streams.SetFailureType<C, D.Failure>, D
            >, T
        >
    where B.Failure == Never, C.Failure == Never {
        Streams.CombineLatest4(
            self.setFailureType(to: D.Failure.self), b.setFailureType(to: D.Failure.self),
            c.setFailureType(to: D.Failure.self), d
        ).map { transform($0.0, $0.1, $0.2, $0.3) }
    }

    /// `combineLatest` of four streams with `transform`: this stream, `b` and `d` cannot fail, `c` can.
    ///
    /// The inputs that cannot fail are given `setFailureType(to: C.Failure.self)`; otherwise exactly
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
                Streams.SetFailureType<Self, C.Failure>, Streams.SetFailureType<B, C.Failure>, C,
                Streams.SetFailureType<D, C.Failure>
            >, T
        >
    where B.Failure == Never, D.Failure == Never {
        Streams.CombineLatest4(
            self.setFailureType(to: C.Failure.self), b.setFailureType(to: C.Failure.self), c,
            d.setFailureType(to: C.Failure.self)
        ).map { transform($0.0, $0.1, $0.2, $0.3) }
    }

    /// `combineLatest` of four streams with `transform`: this stream and `b` cannot fail, `c` and `d` can.
    ///
    /// The inputs that cannot fail are given `setFailureType(to: C.Failure.self)`; otherwise exactly
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
            Streams.CombineLatest4<Streams.SetFailureType<Self, C.Failure>, Streams.SetFailureType<B, C.Failure>, C, D>,
            T
        >
    where B.Failure == Never, D.Failure == C.Failure {
        Streams.CombineLatest4(self.setFailureType(to: C.Failure.self), b.setFailureType(to: C.Failure.self), c, d).map
        { transform($0.0, $0.1, $0.2, $0.3) }
    }

    /// `combineLatest` of four streams with `transform`: this stream, `c` and `d` cannot fail, `b` can.
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
    )
        -> Streams.Map<
            Streams.CombineLatest4<
                Streams.SetFailureType<Self, B.Failure>, B, Streams.SetFailureType<C, B.Failure>,
                Streams.SetFailureType<D, B.Failure>
            >, T
        >
    where C.Failure == Never, D.Failure == Never {
        Streams.CombineLatest4(
            self.setFailureType(to: B.Failure.self), b, c.setFailureType(to: B.Failure.self),
            d.setFailureType(to: B.Failure.self)
        ).map { transform($0.0, $0.1, $0.2, $0.3) }
    }

    /// `combineLatest` of four streams with `transform`: this stream and `c` cannot fail, `b` and `d` can.
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
    )
        -> Streams.Map<
            Streams.CombineLatest4<Streams.SetFailureType<Self, B.Failure>, B, Streams.SetFailureType<C, B.Failure>, D>,
            T
        >
    where C.Failure == Never, D.Failure == B.Failure {
        Streams.CombineLatest4(self.setFailureType(to: B.Failure.self), b, c.setFailureType(to: B.Failure.self), d).map
        { transform($0.0, $0.1, $0.2, $0.3) }
    }

    /// `combineLatest` of four streams with `transform`: this stream and `d` cannot fail, `b` and `c` can.
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
    )
        -> Streams.Map<
            Streams.CombineLatest4<Streams.SetFailureType<Self, B.Failure>, B, C, Streams.SetFailureType<D, B.Failure>>,
            T
        >
    where C.Failure == B.Failure, D.Failure == Never {
        Streams.CombineLatest4(self.setFailureType(to: B.Failure.self), b, c, d.setFailureType(to: B.Failure.self)).map
        { transform($0.0, $0.1, $0.2, $0.3) }
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

    /// `combineLatest` of three streams: `b` cannot fail, this stream and `c` can.
    ///
    /// The inputs that cannot fail are given `setFailureType(to: Failure.self)`; otherwise exactly
    /// `combineLatest(_:_:)`.
    @inlinable
    @_disfavoredOverload
    public func combineLatest<B: SyncStream, C: SyncStream>(
        _ b: B,
        _ c: C
    ) -> Streams.CombineLatest3<Self, Streams.SetFailureType<B, Failure>, C>
    where B.Failure == Never, C.Failure == Failure {
        Streams.CombineLatest3(self, b.setFailureType(to: Failure.self), c)
    }

    /// `combineLatest` of three streams: `c` cannot fail, this stream and `b` can.
    ///
    /// The inputs that cannot fail are given `setFailureType(to: Failure.self)`; otherwise exactly
    /// `combineLatest(_:_:)`.
    @inlinable
    @_disfavoredOverload
    public func combineLatest<B: SyncStream, C: SyncStream>(
        _ b: B,
        _ c: C
    ) -> Streams.CombineLatest3<Self, B, Streams.SetFailureType<C, Failure>>
    where B.Failure == Failure, C.Failure == Never {
        Streams.CombineLatest3(self, b, c.setFailureType(to: Failure.self))
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

    /// `combineLatest` of three streams with `transform`: `b` cannot fail, this stream and `c` can.
    ///
    /// The inputs that cannot fail are given `setFailureType(to: Failure.self)`; otherwise exactly
    /// `combineLatest(_:_:)` with a transform.
    @inlinable
    @_disfavoredOverload
    public func combineLatest<B: SyncStream, C: SyncStream, T: Sendable>(
        _ b: B,
        _ c: C,
        _ transform: @escaping @Sendable (Output, B.Output, C.Output) -> T
    ) -> Streams.Map<Streams.CombineLatest3<Self, Streams.SetFailureType<B, Failure>, C>, T>
    where B.Failure == Never, C.Failure == Failure {
        Streams.CombineLatest3(self, b.setFailureType(to: Failure.self), c).map { transform($0.0, $0.1, $0.2) }
    }

    /// `combineLatest` of three streams with `transform`: `c` cannot fail, this stream and `b` can.
    ///
    /// The inputs that cannot fail are given `setFailureType(to: Failure.self)`; otherwise exactly
    /// `combineLatest(_:_:)` with a transform.
    @inlinable
    @_disfavoredOverload
    public func combineLatest<B: SyncStream, C: SyncStream, T: Sendable>(
        _ b: B,
        _ c: C,
        _ transform: @escaping @Sendable (Output, B.Output, C.Output) -> T
    ) -> Streams.Map<Streams.CombineLatest3<Self, B, Streams.SetFailureType<C, Failure>>, T>
    where B.Failure == Failure, C.Failure == Never {
        Streams.CombineLatest3(self, b, c.setFailureType(to: Failure.self)).map { transform($0.0, $0.1, $0.2) }
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

    /// `combineLatest` of four streams: `b` and `c` cannot fail, this stream and `d` can.
    ///
    /// The inputs that cannot fail are given `setFailureType(to: Failure.self)`; otherwise exactly
    /// `combineLatest(_:_:_:)`.
    @inlinable
    @_disfavoredOverload
    public func combineLatest<B: SyncStream, C: SyncStream, D: SyncStream>(
        _ b: B,
        _ c: C,
        _ d: D
    ) -> Streams.CombineLatest4<Self, Streams.SetFailureType<B, Failure>, Streams.SetFailureType<C, Failure>, D>
    where B.Failure == Never, C.Failure == Never, D.Failure == Failure {
        Streams.CombineLatest4(self, b.setFailureType(to: Failure.self), c.setFailureType(to: Failure.self), d)
    }

    /// `combineLatest` of four streams: `b` and `d` cannot fail, this stream and `c` can.
    ///
    /// The inputs that cannot fail are given `setFailureType(to: Failure.self)`; otherwise exactly
    /// `combineLatest(_:_:_:)`.
    @inlinable
    @_disfavoredOverload
    public func combineLatest<B: SyncStream, C: SyncStream, D: SyncStream>(
        _ b: B,
        _ c: C,
        _ d: D
    ) -> Streams.CombineLatest4<Self, Streams.SetFailureType<B, Failure>, C, Streams.SetFailureType<D, Failure>>
    where B.Failure == Never, C.Failure == Failure, D.Failure == Never {
        Streams.CombineLatest4(self, b.setFailureType(to: Failure.self), c, d.setFailureType(to: Failure.self))
    }

    /// `combineLatest` of four streams: `b` cannot fail, this stream, `c` and `d` can.
    ///
    /// The inputs that cannot fail are given `setFailureType(to: Failure.self)`; otherwise exactly
    /// `combineLatest(_:_:_:)`.
    @inlinable
    @_disfavoredOverload
    public func combineLatest<B: SyncStream, C: SyncStream, D: SyncStream>(
        _ b: B,
        _ c: C,
        _ d: D
    ) -> Streams.CombineLatest4<Self, Streams.SetFailureType<B, Failure>, C, D>
    where B.Failure == Never, C.Failure == Failure, D.Failure == Failure {
        Streams.CombineLatest4(self, b.setFailureType(to: Failure.self), c, d)
    }

    /// `combineLatest` of four streams: `c` and `d` cannot fail, this stream and `b` can.
    ///
    /// The inputs that cannot fail are given `setFailureType(to: Failure.self)`; otherwise exactly
    /// `combineLatest(_:_:_:)`.
    @inlinable
    @_disfavoredOverload
    public func combineLatest<B: SyncStream, C: SyncStream, D: SyncStream>(
        _ b: B,
        _ c: C,
        _ d: D
    ) -> Streams.CombineLatest4<Self, B, Streams.SetFailureType<C, Failure>, Streams.SetFailureType<D, Failure>>
    where B.Failure == Failure, C.Failure == Never, D.Failure == Never {
        Streams.CombineLatest4(self, b, c.setFailureType(to: Failure.self), d.setFailureType(to: Failure.self))
    }

    /// `combineLatest` of four streams: `c` cannot fail, this stream, `b` and `d` can.
    ///
    /// The inputs that cannot fail are given `setFailureType(to: Failure.self)`; otherwise exactly
    /// `combineLatest(_:_:_:)`.
    @inlinable
    @_disfavoredOverload
    public func combineLatest<B: SyncStream, C: SyncStream, D: SyncStream>(
        _ b: B,
        _ c: C,
        _ d: D
    ) -> Streams.CombineLatest4<Self, B, Streams.SetFailureType<C, Failure>, D>
    where B.Failure == Failure, C.Failure == Never, D.Failure == Failure {
        Streams.CombineLatest4(self, b, c.setFailureType(to: Failure.self), d)
    }

    /// `combineLatest` of four streams: `d` cannot fail, this stream, `b` and `c` can.
    ///
    /// The inputs that cannot fail are given `setFailureType(to: Failure.self)`; otherwise exactly
    /// `combineLatest(_:_:_:)`.
    @inlinable
    @_disfavoredOverload
    public func combineLatest<B: SyncStream, C: SyncStream, D: SyncStream>(
        _ b: B,
        _ c: C,
        _ d: D
    ) -> Streams.CombineLatest4<Self, B, C, Streams.SetFailureType<D, Failure>>
    where B.Failure == Failure, C.Failure == Failure, D.Failure == Never {
        Streams.CombineLatest4(self, b, c, d.setFailureType(to: Failure.self))
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

    /// `combineLatest` of four streams with `transform`: `b` and `c` cannot fail, this stream and `d` can.
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
            Streams.CombineLatest4<Self, Streams.SetFailureType<B, Failure>, Streams.SetFailureType<C, Failure>, D>, T
        >
    where B.Failure == Never, C.Failure == Never, D.Failure == Failure {
        Streams.CombineLatest4(self, b.setFailureType(to: Failure.self), c.setFailureType(to: Failure.self), d).map {
            transform($0.0, $0.1, $0.2, $0.3)
        }
    }

    /// `combineLatest` of four streams with `transform`: `b` and `d` cannot fail, this stream and `c` can.
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
            Streams.CombineLatest4<Self, Streams.SetFailureType<B, Failure>, C, Streams.SetFailureType<D, Failure>>, T
        >
    where B.Failure == Never, C.Failure == Failure, D.Failure == Never {
        Streams.CombineLatest4(self, b.setFailureType(to: Failure.self), c, d.setFailureType(to: Failure.self)).map {
            transform($0.0, $0.1, $0.2, $0.3)
        }
    }

    /// `combineLatest` of four streams with `transform`: `b` cannot fail, this stream, `c` and `d` can.
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
    ) -> Streams.Map<Streams.CombineLatest4<Self, Streams.SetFailureType<B, Failure>, C, D>, T>
    where B.Failure == Never, C.Failure == Failure, D.Failure == Failure {
        Streams.CombineLatest4(self, b.setFailureType(to: Failure.self), c, d).map { transform($0.0, $0.1, $0.2, $0.3) }
    }

    /// `combineLatest` of four streams with `transform`: `c` and `d` cannot fail, this stream and `b` can.
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
            Streams.CombineLatest4<Self, B, Streams.SetFailureType<C, Failure>, Streams.SetFailureType<D, Failure>>, T
        >
    where B.Failure == Failure, C.Failure == Never, D.Failure == Never {
        Streams.CombineLatest4(self, b, c.setFailureType(to: Failure.self), d.setFailureType(to: Failure.self)).map {
            transform($0.0, $0.1, $0.2, $0.3)
        }
    }

    /// `combineLatest` of four streams with `transform`: `c` cannot fail, this stream, `b` and `d` can.
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
    ) -> Streams.Map<Streams.CombineLatest4<Self, B, Streams.SetFailureType<C, Failure>, D>, T>
    where B.Failure == Failure, C.Failure == Never, D.Failure == Failure {
        Streams.CombineLatest4(self, b, c.setFailureType(to: Failure.self), d).map { transform($0.0, $0.1, $0.2, $0.3) }
    }

    /// `combineLatest` of four streams with `transform`: `d` cannot fail, this stream, `b` and `c` can.
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
    ) -> Streams.Map<Streams.CombineLatest4<Self, B, C, Streams.SetFailureType<D, Failure>>, T>
    where B.Failure == Failure, C.Failure == Failure, D.Failure == Never {
        Streams.CombineLatest4(self, b, c, d.setFailureType(to: Failure.self)).map { transform($0.0, $0.1, $0.2, $0.3) }
    }
}
