#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The system calls a `RecordLog` makes, behind a protocol so tests can inject failures (`ENOSPC`, `EIO`,
/// short writes, a failing fsync) and see what the log does with them. Every method returns the call's
/// result and leaves `errno`'s value in the error it returns: `nil` means success.
package protocol FileSystem: Sendable {
    /// `open(path, flags, mode)`: a descriptor, or `errno`.
    func open(_ path: String, flags: Int32, mode: mode_t) -> Result<Int32, FileSystemError>
    /// `pread`: the bytes read (fewer at end of file), or `errno`.
    func read(
        _ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64
    ) -> Result<Int, FileSystemError>
    /// `pwrite`: the bytes written (possibly fewer than asked), or `errno`.
    func write(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer, at offset: Int64) -> Result<Int, FileSystemError>
    /// Makes the file's data durable: `fcntl(F_FULLFSYNC)` on Darwin (plain `fsync` does not reach the disk
    /// there), `fsync` elsewhere.
    func sync(_ descriptor: Int32) -> FileSystemError?
    /// `ftruncate`.
    func truncate(_ descriptor: Int32, to length: Int64) -> FileSystemError?
    /// `flock(LOCK_EX | LOCK_NB)`.
    func lockExclusively(_ descriptor: Int32) -> FileSystemError?
    /// The file's size (`fstat`).
    func size(_ descriptor: Int32) -> Result<Int64, FileSystemError>
    /// `close` (its errors are ignored: on Linux the descriptor is gone even when it reports one).
    func close(_ descriptor: Int32)
}

/// A failed system call's `errno`.
package struct FileSystemError: Error, Sendable, Hashable {
    package var code: Int32
    package init(_ code: Int32) { self.code = code }
}

/// The real system calls.
package struct SystemFileSystem: FileSystem {
    package init() {}

    package func open(_ path: String, flags: Int32, mode: mode_t) -> Result<Int32, FileSystemError> {
        while true {
            let descriptor = systemOpen(path, flags, mode)
            if descriptor >= 0 { return .success(descriptor) }
            if errno != EINTR { return .failure(FileSystemError(errno)) }
        }
    }

    package func read(
        _ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64
    ) -> Result<Int, FileSystemError> {
        while true {
            let count = pread(descriptor, buffer.baseAddress, buffer.count, off_t(offset))
            if count >= 0 { return .success(count) }
            if errno != EINTR { return .failure(FileSystemError(errno)) }
        }
    }

    package func write(
        _ descriptor: Int32, _ buffer: UnsafeRawBufferPointer, at offset: Int64
    ) -> Result<Int, FileSystemError> {
        while true {
            let count = pwrite(descriptor, buffer.baseAddress, buffer.count, off_t(offset))
            if count >= 0 { return .success(count) }
            if errno != EINTR { return .failure(FileSystemError(errno)) }
        }
    }

    package func sync(_ descriptor: Int32) -> FileSystemError? {
        #if canImport(Darwin)
            if fcntl(descriptor, F_FULLFSYNC) == 0 { return nil }
            // File systems without F_FULLFSYNC (some network ones) refuse it: fall back to fsync.
            guard errno == ENOTSUP || errno == EINVAL || errno == ENOTTY else { return FileSystemError(errno) }
        #endif
        while fsync(descriptor) != 0 {
            if errno != EINTR { return FileSystemError(errno) }
        }
        return nil
    }

    package func truncate(_ descriptor: Int32, to length: Int64) -> FileSystemError? {
        while ftruncate(descriptor, off_t(length)) != 0 {
            if errno != EINTR { return FileSystemError(errno) }
        }
        return nil
    }

    package func lockExclusively(_ descriptor: Int32) -> FileSystemError? {
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            if errno != EINTR { return FileSystemError(errno) }
        }
        return nil
    }

    package func size(_ descriptor: Int32) -> Result<Int64, FileSystemError> {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return .failure(FileSystemError(errno)) }
        return .success(Int64(status.st_size))
    }

    package func close(_ descriptor: Int32) {
        #if canImport(Glibc)
            _ = Glibc.close(descriptor)
        #elseif canImport(Darwin)
            _ = Darwin.close(descriptor)
        #endif
    }
}

private func systemOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
    #if canImport(Glibc)
        Glibc.open(path, flags, mode)
    #elseif canImport(Darwin)
        Darwin.open(path, flags, mode)
    #endif
}

extension FileSystem {
    /// Writes all of `bytes` at `offset`, continuing after short writes; `nil` once every byte is written.
    /// A write that takes nothing of a non-empty buffer is reported as `EIO` rather than retried forever.
    package func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64) -> FileSystemError? {
        var written = 0
        while written < bytes.count {
            let chunk = UnsafeRawBufferPointer(rebasing: bytes[written...])
            switch write(descriptor, chunk, at: offset + Int64(written)) {
            case .failure(let error): return error
            case .success(0): return FileSystemError(EIO)
            case .success(let count): written += count
            }
        }
        return nil
    }
}
