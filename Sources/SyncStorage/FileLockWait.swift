#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Takes a file's exclusive `flock`, waiting briefly for a lock that is being released.
///
/// A file this process just closed can stay locked for a moment: a child that another thread is spawning
/// holds a copy of every descriptor from the fork until its exec closes the `O_CLOEXEC` ones, and an
/// `flock` lasts while any copy is open. So a refusal (`EWOULDBLOCK`) is retried `attempts` times, `pause`
/// apart (about 250 ms in all); a lock held for longer is really held by someone else. Used by every
/// lock the project takes: a record log's, the server's directory `LOCK`, and a store being deleted.
///
/// It blocks the calling thread while it waits: call it where blocking file work belongs (a file queue or
/// an opening thread), never on the cooperative pool.
package enum FileLockWait {
    /// How many times a refused lock is tried in all.
    package static let attempts = 50
    /// The pause between two attempts.
    package static let pause: useconds_t = 5_000

    /// Locks `descriptor` exclusively through `fileSystem`: `nil` once locked, or the last attempt's
    /// error (`EWOULDBLOCK`: still held after every attempt; anything else at once).
    package static func lockExclusively(_ descriptor: Int32, fileSystem: any FileSystem) -> FileSystemError? {
        var attempt = 1
        while let error = fileSystem.lockExclusively(descriptor) {
            guard error.code == EWOULDBLOCK, attempt < attempts else { return error }
            attempt += 1
            usleep(pause)
        }
        return nil
    }
}
