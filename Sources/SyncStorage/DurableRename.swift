#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Replacing a file by another so that a crash at any moment leaves one of the two whole: the new file is
/// written and fsynced at a temporary path first (by the caller), then renamed over the old one (one atomic
/// step within a file system), then the directory is fsynced so that the rename itself is durable.
///
/// Directories are fsynced through a `FileSystem`, whose `sync` is `F_FULLFSYNC` on Darwin (plain `fsync`
/// does not reach the disk there).
package enum DurableRename {
    /// Renames `source` over `destination` and fsyncs their directory. Returns `nil` once both are done;
    /// otherwise the `errno` of the failed rename (nothing changed then) or of the failed directory fsync
    /// (the rename happened but may not survive a crash: the caller must not treat it as durable).
    package static func rename(
        _ source: String, over destination: String, fileSystem: any FileSystem = SystemFileSystem()
    ) -> Int32? {
        guard systemRename(source, destination) == 0 else { return errno }
        return syncDirectory(containing: destination, fileSystem: fileSystem)
    }

    /// Fsyncs the directory holding `path`. Returns the failed call's `errno`, `nil` on success.
    package static func syncDirectory(
        containing path: String, fileSystem: any FileSystem = SystemFileSystem()
    ) -> Int32? {
        syncDirectory(parent(of: path), fileSystem: fileSystem)
    }

    /// Fsyncs the directory at `directory`, so that the entries made in it (a rename, a new file or
    /// directory) survive a crash. Returns the failed call's `errno`, `nil` on success. A file system that
    /// cannot sync directories at all (`EINVAL`, `ENOTSUP`: some network and FUSE ones) is not an error:
    /// there is nothing more to be had from it.
    package static func syncDirectory(_ directory: String, fileSystem: any FileSystem = SystemFileSystem()) -> Int32? {
        let descriptor: Int32
        switch fileSystem.open(directory, flags: O_RDONLY | O_CLOEXEC, mode: 0) {
        case .success(let opened): descriptor = opened
        case .failure(let error): return error.code
        }
        defer { fileSystem.close(descriptor) }
        guard let error = fileSystem.sync(descriptor) else { return nil }
        return error.code == EINVAL || error.code == ENOTSUP ? nil : error.code
    }

    /// Creates `directory` and every missing parent (like `mkdir -p`, mode 0755), fsyncing the parent of
    /// each directory it creates so that the new entries survive a crash. Returns the `errno` of a failed
    /// `mkdir` or fsync and the path it concerned, `nil` on success (also when everything existed).
    package static func createDirectories(
        _ directory: String, fileSystem: any FileSystem = SystemFileSystem()
    ) -> (path: String, errno: Int32)? {
        var prefix = directory.hasPrefix("/") ? "" : "."
        for component in directory.split(separator: "/") {
            let parent = prefix.isEmpty ? "/" : prefix
            prefix += "/" + component
            if mkdir(prefix, 0o755) == 0 {
                if let code = syncDirectory(parent, fileSystem: fileSystem) { return (parent, code) }
            } else if errno != EEXIST {
                return (prefix, errno)
            }
        }
        return nil
    }

    private static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}

private func systemRename(_ source: String, _ destination: String) -> Int32 { rename(source, destination) }
