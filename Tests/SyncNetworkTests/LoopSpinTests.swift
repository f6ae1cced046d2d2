import Foundation
import Testing

@testable import SyncNetwork

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Issue 23, item 5: the loop never spins on a readiness it will not act on, sockets are close-on-exec
/// from their creation, and timers come out of a heap in deadline order.
@Suite(.timeLimit(.minutes(5))) struct LoopSpinTests {
    /// A connected pair of stream sockets.
    func socketPair() throws -> (Int32, Int32) {
        var ends: [Int32] = [0, 0]
        #if canImport(Glibc)
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
                throw POSIXError(.EIO)
            }
        #else
            guard socketpair(AF_UNIX, SOCK_STREAM, 0, &ends) == 0 else { throw POSIXError(.EIO) }
        #endif
        return (ends[0], ends[1])
    }

    @Test("a socket whose reading is paused is not reported when its peer hangs up (one-shot, not level-triggered)")
    func pausedHangUpNotReported() throws {
        for makePoller in EventLoopTests.pollers() {
            let poller = try makePoller()
            let (mine, peer) = try socketPair()
            defer {
                close(mine)
                close(peer)
            }
            poller.add(mine, readable: true, writable: false)
            poller.modify(mine, readable: false, writable: false)  // reading paused (backpressure)
            _ = shutdown(peer, Int32(SHUT_WR))
            // Reported again and again, this would spin the loop until reading resumed.
            let reports = (0..<3).flatMap { _ in poller.wait(timeoutMilliseconds: 0) }.filter { $0.0 == mine }
            #expect(reports.isEmpty, "\(type(of: poller)): \(reports.map(\.1))")
            // Once reading resumes, the end of the stream is seen.
            poller.modify(mine, readable: true, writable: false)
            #expect(poller.wait(timeoutMilliseconds: 1000).contains { $0.0 == mine && $0.1.readable })
            poller.remove(mine)
        }
    }

    @Test("the listener backs off after any accept error but a dropped connection or an interrupted call")
    func acceptBackOff() {
        #expect(WebSocketListener.backsOff(afterAcceptError: EMFILE))
        #expect(WebSocketListener.backsOff(afterAcceptError: ENFILE))
        #expect(WebSocketListener.backsOff(afterAcceptError: ENOBUFS))
        #expect(WebSocketListener.backsOff(afterAcceptError: ENOMEM))
        #expect(WebSocketListener.backsOff(afterAcceptError: EINVAL))
        #expect(!WebSocketListener.backsOff(afterAcceptError: ECONNABORTED))
        #expect(!WebSocketListener.backsOff(afterAcceptError: EINTR))
    }

    @Test("listening and accepted sockets are close-on-exec and non-blocking")
    func closeOnExec() throws {
        let address = try Socket.resolve(host: "127.0.0.1", port: 0, passive: true).get()[0]
        let (listener, port) = try Socket.listen(on: address, backlog: 4).get()
        defer { Socket.close(listener) }
        let client = try RawSocket(port: port)
        var accepted: Int32 = -1
        for _ in 0..<1000 {
            if case .transferred(let descriptor) = Socket.accept(listener) {
                accepted = Int32(descriptor)
                break
            }
            usleep(1000)
        }
        defer { Socket.close(accepted) }
        _ = client
        #expect(accepted >= 0)
        for descriptor in [listener, accepted] {
            #expect(fcntl(descriptor, F_GETFD) & FD_CLOEXEC != 0)
            #expect(fcntl(descriptor, F_GETFL) & O_NONBLOCK != 0)
        }
    }

    @Test("timers from a heap: 2,000 timers with shuffled deadlines, half cancelled, run in deadline order")
    func timerHeap() {
        var heap = TimerHeap<Int>()
        let seed: UInt64 = 0x2323_2023
        print("LoopSpinTests.timerHeap: seed \(seed)")
        var random = SplitMix(seed: seed)
        let base = ContinuousClock.now
        var ids: [(id: UInt64, deadline: ContinuousClock.Instant, value: Int)] = []
        for value in 0..<2000 {
            let deadline = base + .milliseconds(Int(random.next() % 500))
            ids.append((heap.insert(deadline: deadline, value), deadline, value))
        }
        var cancelled = Set<UInt64>()
        for entry in ids where random.next() % 2 == 0 {
            heap.cancel(entry.id)
            cancelled.insert(entry.id)
        }
        let expected = ids.filter { !cancelled.contains($0.id) }.sorted { ($0.deadline, $0.id) < ($1.deadline, $1.id) }
        #expect(heap.count == expected.count, "seed \(seed)")
        #expect(heap.earliest == expected.first?.deadline, "seed \(seed)")
        var order: [Int] = []
        while let value = heap.popDue(now: base + .seconds(1)) { order.append(value) }
        #expect(order == expected.map(\.value), "seed \(seed)")
        #expect(heap.count == 0)
    }
}

/// SplitMix64: a small seeded generator (the seed is printed on failure).
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
