#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Replacing a file by another so that a crash at any moment leaves one of the two whole: the new file is
/// written and fsynced at a temporary path first (by the caller), then renamed over the old one (one atomic
/// step within a file system), then the directory is fsynced so that the rename itself is durable.
package enum DurableRename {
    /// Renames `source` over `destination` and fsyncs their directory. Returns the `errno` of a failed
    /// rename (nothing changed then), `nil` on success. A directory that refuses fsync (some file systems
    /// do) is not an error: the rename is still atomic, just not yet durable.
    package static func rename(_ source: String, over destination: String) -> Int32? {
        guard systemRename(source, destination) == 0 else { return errno }
        syncDirectory(containing: destination)
        return nil
    }

    /// Fsyncs the directory holding `path` (best effort).
    package static func syncDirectory(containing path: String) {
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        let descriptor = open(directory.isEmpty ? "/" : directory, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        _ = close(descriptor)
    }
}

private func systemRename(_ source: String, _ destination: String) -> Int32 { rename(source, destination) }
