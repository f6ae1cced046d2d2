#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a descriptor is ready for.
struct Readiness: Sendable {
    var readable: Bool
    var writable: Bool
    /// The peer hung up or the socket has an error: reading will tell which.
    var hangUp: Bool
}

/// The readiness interface an `EventLoop` waits on: epoll on Linux, `poll(2)` elsewhere. Level-triggered:
/// a descriptor that stays ready is reported again on the next wait. Used only by its loop's thread.
protocol Poller: AnyObject {
    func add(_ descriptor: Int32, readable: Bool, writable: Bool)
    func modify(_ descriptor: Int32, readable: Bool, writable: Bool)
    func remove(_ descriptor: Int32)
    /// Waits up to `timeoutMilliseconds` (-1: no limit) and returns the ready descriptors.
    func wait(timeoutMilliseconds: Int32) -> [(Int32, Readiness)]
}

/// `poll(2)`: portable, O(descriptors) per wait. Darwin's loop uses it; Linux uses `EpollPoller`.
final class PollPoller: Poller {
    private var interests: [Int32: (readable: Bool, writable: Bool)] = [:]

    func add(_ descriptor: Int32, readable: Bool, writable: Bool) { interests[descriptor] = (readable, writable) }
    func modify(_ descriptor: Int32, readable: Bool, writable: Bool) { interests[descriptor] = (readable, writable) }
    func remove(_ descriptor: Int32) { interests[descriptor] = nil }

    func wait(timeoutMilliseconds: Int32) -> [(Int32, Readiness)] {
        var descriptors = interests.map { descriptor, interest in
            pollfd(
                fd: descriptor,
                events: Int16((interest.readable ? Int32(POLLIN) : 0) | (interest.writable ? Int32(POLLOUT) : 0)),
                revents: 0)
        }
        let count = poll(&descriptors, nfds_t(descriptors.count), timeoutMilliseconds)
        guard count > 0 else { return [] }
        return descriptors.compactMap { entry in
            let events = Int32(entry.revents)
            guard events != 0 else { return nil }
            return (
                entry.fd,
                Readiness(
                    readable: events & Int32(POLLIN) != 0, writable: events & Int32(POLLOUT) != 0,
                    hangUp: events & (Int32(POLLHUP) | Int32(POLLERR) | Int32(POLLNVAL)) != 0)
            )
        }
    }
}

#if os(Linux)
    import CSyncNetwork

    /// epoll: O(ready descriptors) per wait, for thousands of connections on one thread.
    final class EpollPoller: Poller {
        private let epoll: Int32
        private var events = [epoll_event](repeating: epoll_event(), count: 512)

        /// - Throws: `NetworkError.systemCall` when the epoll instance cannot be created (`EMFILE`…).
        init() throws(NetworkError) {
            epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
            guard epoll >= 0 else { throw .systemCall("epoll_create1", errno) }
        }

        deinit { Glibc.close(epoll) }

        private func control(_ operation: Int32, _ descriptor: Int32, readable: Bool, writable: Bool) {
            var event = epoll_event()
            // EPOLLRDHUP only with EPOLLIN: it is level-triggered, so a peer's FIN while reading is paused
            // (backpressure) would be reported on every wait and spin the loop until reading resumed. The
            // FIN is then seen as the end of the stream once reading resumes; EPOLLHUP/EPOLLERR (the
            // connection is gone entirely) are always reported, and the channel closes on them.
            event.events =
                (readable ? EPOLLIN.rawValue | EPOLLRDHUP.rawValue : 0) | (writable ? EPOLLOUT.rawValue : 0)
            event.data.fd = descriptor
            _ = epoll_ctl(epoll, operation, descriptor, &event)
        }

        func add(_ descriptor: Int32, readable: Bool, writable: Bool) {
            control(EPOLL_CTL_ADD, descriptor, readable: readable, writable: writable)
        }

        func modify(_ descriptor: Int32, readable: Bool, writable: Bool) {
            control(EPOLL_CTL_MOD, descriptor, readable: readable, writable: writable)
        }

        func remove(_ descriptor: Int32) {
            var event = epoll_event()
            _ = epoll_ctl(epoll, EPOLL_CTL_DEL, descriptor, &event)
        }

        func wait(timeoutMilliseconds: Int32) -> [(Int32, Readiness)] {
            let count = events.withUnsafeMutableBufferPointer { buffer in
                epoll_wait(epoll, buffer.baseAddress, Int32(buffer.count), timeoutMilliseconds)
            }
            guard count > 0 else { return [] }
            return (0..<Int(count)).map { index in
                let event = events[index]
                let flags = event.events
                return (
                    event.data.fd,
                    Readiness(
                        readable: flags & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue) != 0,
                        writable: flags & EPOLLOUT.rawValue != 0,
                        hangUp: flags & (EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0)
                )
            }
        }
    }
#endif
