import Dispatch
import Foundation
import SyncStreams
import TestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A TCP listener on 127.0.0.1 that accepts connections and never says a word: the WebSocket handshake
/// it is sent goes unanswered, so a client's connect timeout is what ends each attempt. Accepting runs on
/// a dispatch thread (a `poll` with a short timeout), off Swift's cooperative pool.
final class SilentListener: Sendable {
    struct Failed: Error {
        let call: String
        let code: Int32
    }

    let port: Int
    private let descriptor: Int32
    private let state = Locked<(accepted: [Int32], stopped: Bool)>(([], false))

    init() throws {
        #if canImport(Glibc)
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
            let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw Failed(call: "socket", code: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && listen(descriptor, 16) == 0
                    && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else {
            let code = errno
            close(descriptor)
            throw Failed(call: "bind/listen", code: code)
        }
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
        startThread(named: "SilentListener") { [self] in acceptUntilStopped() }
    }

    /// How many connections it accepted so far.
    var acceptedCount: Int { state.withLock { $0.accepted.count } }

    /// Stops accepting and closes every connection (within about 100 ms, on the accepting thread).
    func stop() { state.withLock { $0.stopped = true } }

    private func acceptUntilStopped() {
        while !state.withLock({ $0.stopped }) {
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 100) > 0 else { continue }
            let accepted = accept(descriptor, nil, nil)
            guard accepted >= 0 else { continue }
            // Not inherited by a child another test starts, which would hold the connection open.
            _ = fcntl(accepted, F_SETFD, FD_CLOEXEC)
            state.withLock { $0.accepted.append(accepted) }
        }
        for accepted in state.withLock({ $0.accepted }) { close(accepted) }
        close(descriptor)
    }
}
