/// Why a network operation of this module failed.
public enum NetworkError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The host name could not be resolved.
    case cannotResolve(host: String, reason: String)
    /// A system call failed with `errno`.
    case systemCall(String, Int32)

    public var description: String {
        switch self {
        case .cannotResolve(let host, let reason): "cannot resolve \(host): \(reason)"
        case .systemCall(let call, let code): "\(call) failed: \(Socket.describe(code)) (errno \(code))"
        }
    }
}
