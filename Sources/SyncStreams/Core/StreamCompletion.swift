/// How a stream ended: normally, or with a failure.
///
/// A completion is the last event a subscriber receives: after it, nothing more is delivered.
@frozen
public enum StreamCompletion<Failure: Error>: Sendable {
    /// The stream finished normally.
    case finished
    /// The stream failed with an error.
    case failure(Failure)

    /// The completion with its failure transformed; `.finished` stays `.finished`.
    @inlinable
    public func mapFailure<NewFailure: Error>(
        _ transform: (Failure) -> NewFailure
    ) -> StreamCompletion<NewFailure> {
        switch self {
        case .finished: .finished
        case .failure(let error): .failure(transform(error))
        }
    }
}

extension StreamCompletion: Equatable where Failure: Equatable {}
extension StreamCompletion: Hashable where Failure: Hashable {}

extension StreamCompletion where Failure == Never {
    /// Any completion of a stream that cannot fail, as a completion of a stream that may.
    @inlinable
    public func promoted<NewFailure: Error>(to: NewFailure.Type = NewFailure.self) -> StreamCompletion<NewFailure> {
        .finished
    }
}
