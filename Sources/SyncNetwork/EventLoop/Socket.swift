#if canImport(Glibc)
    import CSyncNetwork
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Thin wrappers over the socket system calls, with `EINTR` retried and results as values.
enum Socket {
    /// What a non-blocking read or write did.
    enum IOResult: Equatable {
        case transferred(Int)
        case wouldBlock
        case endOfFile
        case failed(Int32)
    }

    /// A resolved address to connect to or listen on.
    struct Address: @unchecked Sendable {
        // @unchecked Sendable: a plain C struct copied by value.
        var storage: sockaddr_storage
        var length: socklen_t
        var family: Int32

        var isIPv4: Bool { family == AF_INET }
    }

    static func configure(_ descriptor: Int32, nonBlocking: Bool) {
        let flags = fcntl(descriptor, F_GETFL)
        if nonBlocking { _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        #if canImport(Darwin)
            var one: Int32 = 1
            _ = setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    /// Resolves `host` (a name or a numeric address) and `port`. Blocks on DNS: never call it on a loop
    /// or on Swift's cooperative pool.
    static func resolve(host: String, port: Int, passive: Bool = false) -> Result<[Address], NetworkError> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
            hints.ai_socktype = SOCK_STREAM
        #endif
        hints.ai_flags = passive ? AI_PASSIVE : 0
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            return .failure(.cannotResolve(host: host, reason: String(cString: gai_strerror(status))))
        }
        defer { freeaddrinfo(list) }
        var addresses: [Address] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            var storage = sockaddr_storage()
            withUnsafeMutableBytes(of: &storage) { buffer in
                buffer.copyMemory(
                    from: UnsafeRawBufferPointer(start: current.pointee.ai_addr, count: Int(current.pointee.ai_addrlen))
                )
            }
            addresses.append(
                Address(storage: storage, length: current.pointee.ai_addrlen, family: current.pointee.ai_family))
            entry = current.pointee.ai_next
        }
        return .success(addresses)
    }

    private static func makeSocket(family: Int32) -> Int32 {
        #if canImport(Glibc)
            // Close-on-exec from its creation: no window in which another thread's fork/exec inherits it.
            let descriptor = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
            let descriptor = socket(family, SOCK_STREAM, 0)
        #endif
        if descriptor >= 0 { configure(descriptor, nonBlocking: true) }
        return descriptor
    }

    /// A non-blocking socket connecting to `address`: the descriptor once `connect` succeeded or is in
    /// progress (wait for writable, then check `pendingError`).
    static func startConnect(to address: Address) -> Result<Int32, NetworkError> {
        let descriptor = makeSocket(family: address.family)
        guard descriptor >= 0 else { return .failure(.systemCall("socket", errno)) }
        setNoDelay(descriptor)
        var storage = address.storage
        let result = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, address.length) }
        }
        if result == 0 || errno == EINPROGRESS || errno == EINTR { return .success(descriptor) }
        let code = errno
        close(descriptor)
        return .failure(.systemCall("connect", code))
    }

    /// A non-blocking listening socket bound to `address`, and the port it got.
    static func listen(on address: Address, backlog: Int32) -> Result<(Int32, Int), NetworkError> {
        let descriptor = makeSocket(family: address.family)
        guard descriptor >= 0 else { return .failure(.systemCall("socket", errno)) }
        var one: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var storage = address.storage
        let bound = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, address.length) }
        }
        guard bound == 0 else {
            let code = errno
            close(descriptor)
            return .failure(.systemCall("bind", code))
        }
        guard systemListen(descriptor, backlog) == 0 else {
            let code = errno
            close(descriptor)
            return .failure(.systemCall("listen", code))
        }
        var local = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        let port: Int = withUnsafePointer(to: &local) { pointer in
            if Int32(pointer.pointee.ss_family) == AF_INET6 {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    Int(UInt16(bigEndian: $0.pointee.sin6_port))
                }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                Int(UInt16(bigEndian: $0.pointee.sin_port))
            }
        }
        return .success((descriptor, port))
    }

    /// The next pending connection on `listener` (`.transferred(descriptor)`), or why there is none.
    static func accept(_ listener: Int32) -> IOResult {
        while true {
            let descriptor = systemAccept(listener)
            if descriptor >= 0 {
                configure(descriptor, nonBlocking: true)
                setNoDelay(descriptor)
                return .transferred(Int(descriptor))
            }
            if errno == EINTR { continue }
            return errno == EAGAIN || errno == EWOULDBLOCK ? .wouldBlock : .failed(errno)
        }
    }

    static func setNoDelay(_ descriptor: Int32) {
        var one: Int32 = 1
        _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// The error a non-blocking `connect` ended with (0: connected).
    static func pendingError(_ descriptor: Int32) -> Int32 {
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &code, &length) == 0 else { return errno }
        return code
    }

    static func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) -> IOResult {
        while true {
            let count = systemRead(descriptor, buffer.baseAddress, buffer.count)
            if count > 0 { return .transferred(count) }
            if count == 0 { return .endOfFile }
            if errno == EINTR { continue }
            return errno == EAGAIN || errno == EWOULDBLOCK ? .wouldBlock : .failed(errno)
        }
    }

    static func write(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer) -> IOResult {
        while true {
            #if canImport(Glibc)
                let count = send(descriptor, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL))
            #else
                let count = send(descriptor, buffer.baseAddress, buffer.count, 0)
            #endif
            if count >= 0 { return .transferred(count) }
            if errno == EINTR { continue }
            return errno == EAGAIN || errno == EWOULDBLOCK ? .wouldBlock : .failed(errno)
        }
    }

    /// Writes `buffers` in order with one gathering system call (`sendmsg`, without `SIGPIPE`).
    static func write(_ descriptor: Int32, _ buffers: UnsafeBufferPointer<iovec>) -> IOResult {
        var message = msghdr()
        message.msg_iov = UnsafeMutablePointer(mutating: buffers.baseAddress)
        message.msg_iovlen = numericCast(buffers.count)
        while true {
            #if canImport(Glibc)
                let count = sendmsg(descriptor, &message, Int32(MSG_NOSIGNAL))
            #else
                let count = sendmsg(descriptor, &message, 0)
            #endif
            if count >= 0 { return .transferred(count) }
            if errno == EINTR { continue }
            return errno == EAGAIN || errno == EWOULDBLOCK ? .wouldBlock : .failed(errno)
        }
    }

    static func shutdownWrite(_ descriptor: Int32) {
        _ = shutdown(descriptor, Int32(SHUT_WR))
    }

    static func rawWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
        systemWrite(descriptor, buffer, count)
    }

    static func rawRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
        systemRead(descriptor, buffer, count)
    }

    static func close(_ descriptor: Int32) {
        _ = systemClose(descriptor)
    }

    /// A readable description of `errno` `code`.
    static func describe(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}

// Module-level names for the C functions whose names `Socket`'s own methods shadow.
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(fd, buffer, count)
}
private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int { write(fd, buffer, count) }
private func systemClose(_ fd: Int32) -> Int32 { close(fd) }
private func systemListen(_ fd: Int32, _ backlog: Int32) -> Int32 { listen(fd, backlog) }
#if os(Linux)
    /// accept4: non-blocking and close-on-exec from the start (`configure` then only repeats it).
    private func systemAccept(_ fd: Int32) -> Int32 { csyncnetwork_accept_nonblocking_cloexec(fd) }
#else
    private func systemAccept(_ fd: Int32) -> Int32 { accept(fd, nil, nil) }
#endif
