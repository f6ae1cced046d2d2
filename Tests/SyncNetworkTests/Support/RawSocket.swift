import Foundation
import TestSupport

@testable import SyncNetwork

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A blocking TCP client for tests that speak WebSocket byte by byte: every read and write has a deadline
/// (`SO_RCVTIMEO`, `SO_SNDTIMEO`), so a server that never answers (or never reads) fails the test instead
/// of hanging it.
final class RawSocket {
    let descriptor: Int32
    private var buffered: [UInt8] = []

    /// Connects to 127.0.0.1:`port`; reads and writes wait at most `timeout`, scaled for a sanitizer build as
    /// every test deadline is (`BuildFlavor.deadlineScale`: a loaded ThreadSanitizer run can stall the server
    /// for ten seconds). `receiveBufferBytes` shrinks the socket's receive buffer (set before connecting, so
    /// the advertised window is small too): a client that does not read then holds little in the kernel, and
    /// the server's own queue fills.
    init(port: Int, timeout: Duration = .seconds(20), receiveBufferBytes: Int32? = nil) throws {
        #if canImport(Glibc)
            descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
            descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw RawSocketError.failed("socket", errno) }
        var seconds = timeval(tv_sec: Int(timeout.scaledForBuild.components.seconds), tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &seconds, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &seconds, socklen_t(MemoryLayout<timeval>.size))
        if var bytes = receiveBufferBytes {
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &bytes, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            close(descriptor)
            throw RawSocketError.failed("connect", errno)
        }
    }

    deinit { close(descriptor) }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            #if canImport(Glibc)
                let count = bytes[offset...].withUnsafeBytes {
                    Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
            #else
                let count = bytes[offset...].withUnsafeBytes { Darwin.send(descriptor, $0.baseAddress, $0.count, 0) }
            #endif
            guard count > 0 else {
                throw errno == EAGAIN || errno == EWOULDBLOCK
                    ? RawSocketError.timedOut : RawSocketError.failed("send", errno)
            }
            offset += count
        }
    }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// Reads more bytes; `false` at end of stream. Throws when the read timed out or failed.
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count == 0 { return false }
        guard count > 0 else {
            throw errno == EAGAIN || errno == EWOULDBLOCK
                ? RawSocketError.timedOut : RawSocketError.failed("read", errno)
        }
        buffered += chunk[0..<count]
        return true
    }

    /// The HTTP head the server sent (up to the blank line).
    func readHead() throws -> String {
        while true {
            if let end = WebSocketHandshake.headEnd(in: buffered[...]) {
                let head = String(decoding: buffered[0..<end], as: UTF8.self)
                buffered.removeFirst(end)
                return head
            }
            guard try fill() else { throw RawSocketError.closed }
        }
    }

    /// Completes a valid opening handshake.
    func upgrade() throws {
        try send(WebSocketHandshake.request(host: "127.0.0.1", port: 80, key: "dGhlIHNhbXBsZSBub25jZQ=="))
        let head = try readHead()
        guard head.hasPrefix("HTTP/1.1 101") else { throw RawSocketError.unexpected(head) }
    }

    /// The next frame from the server (unmasked), or `nil` at end of stream.
    func readFrame() throws -> WebSocketFrame? {
        let decoder = WebSocketFrameDecoder(reader: .client, maximumMessageBytes: 1 << 26)
        while true {
            if let (frame, consumed) = try decoder.decode(buffered, from: 0) {
                buffered.removeFirst(consumed)
                return frame
            }
            guard try fill() else { return nil }
        }
    }

    /// Reads frames until a close frame, and returns its code (`nil`: the stream ended without one).
    func readCloseCode() throws -> UInt16? {
        while let frame = try readFrame() {
            if frame.opcode == .close {
                guard frame.payload.count >= 2 else { return 1005 }
                return UInt16(frame.payload[0]) << 8 | UInt16(frame.payload[1])
            }
        }
        return nil
    }

    /// Whether the server closed the stream (reads until end of stream, failing on a timeout).
    func readUntilClosed() throws -> Bool {
        while try fill() { buffered.removeAll() }
        return true
    }
}

enum RawSocketError: Error {
    case failed(String, Int32)
    case timedOut
    case closed
    case unexpected(String)
}

/// A masked client frame, built by hand so tests can break any rule.
func clientFrame(
    fin: Bool = true, rsv: UInt8 = 0, opcode: UInt8, payload: [UInt8], masked: Bool = true,
    declaredLength: UInt64? = nil
) -> [UInt8] {
    var bytes: [UInt8] = [(fin ? 0x80 : 0) | (rsv << 4) | opcode]
    let length = declaredLength ?? UInt64(payload.count)
    let maskBit: UInt8 = masked ? 0x80 : 0
    if length <= 125 {
        bytes.append(maskBit | UInt8(length))
    } else if length <= 0xFFFF {
        bytes += [maskBit | 126, UInt8(length >> 8), UInt8(length & 0xFF)]
    } else {
        bytes.append(maskBit | 127)
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: length >> UInt64(shift)))
        }
    }
    guard masked else { return bytes + payload }
    let mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
    bytes += mask
    bytes += payload.enumerated().map { $0.element ^ mask[$0.offset & 3] }
    return bytes
}
