import Foundation
import SyncStorage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Deleting local files so that a crash at any moment leaves either the whole thing or nothing in place.
enum LocalFiles {
    /// The prefix of a file or directory renamed aside to be deleted. What carries it is garbage: a crash
    /// interrupted its deletion, and `sweep(_:)` finishes the job.
    static let tombstonePrefix = ".deleted-"
    /// The prefix of a client reset's new store while it is written, beside the store it replaces (see
    /// `SessionEngine+ClientReset`). What carries it when no reset runs is garbage a crash left: opening
    /// the store removes it (`removeResetLeftover(of:)`).
    static let resetPrefix = ".reset-"

    /// Removes what an interrupted client reset of the store at `path` left. Call while holding the
    /// store's lock (no reset of it can run then).
    static func removeResetLeftover(of path: String) {
        _ = unlink(SessionEngine.resetPath(for: path))
    }

    /// Renames `url` aside (atomic within its directory, then the directory is fsynced), then deletes it.
    /// Nothing at `url`: nothing to do. A failed directory fsync is a `.storageFailure` (the deletion may
    /// not survive a crash; what was renamed aside is left for the next login's sweep).
    static func remove(_ url: URL, fileSystem: any FileSystem) throws(SyncError) {
        let parent = url.deletingLastPathComponent()
        let tombstone = parent.appendingPathComponent(tombstonePrefix + UUID().uuidString)
        guard rename(url.path, tombstone.path) == 0 else {
            if errno == ENOENT { return }
            throw .storageFailure("cannot move \(url.path) aside to delete it (errno \(errno))")
        }
        if let code = DurableRename.syncDirectory(parent.path, fileSystem: fileSystem) {
            throw .storageFailure("cannot fsync \(parent.path) after moving \(url.path) aside (errno \(code))")
        }
        do {
            try FileManager.default.removeItem(at: tombstone)
        } catch {
            // Gone already (a login's sweep took it): deleted all the same.
            guard FileManager.default.fileExists(atPath: tombstone.path) else { return }
            throw .storageFailure("cannot delete \(tombstone.path): \(error)")
        }
    }

    /// Removes a local store: takes its lock (`.storeInUse` if an app holds it), renames it aside while
    /// holding the lock (so no app opens it between the check and the rename), fsyncs the directory,
    /// unlocks, then deletes it. Nothing at `url`: nothing to do.
    static func removeStore(
        _ url: URL, fileSystem: any FileSystem, willRename: () -> Void = {}
    ) throws(SyncError) {
        let descriptor = open(url.path, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return }
            throw .storageFailure("cannot open \(url.path) to delete it (errno \(errno))")
        }
        defer { _ = close(descriptor) }
        // A store this process just closed may still be locked by a child being spawned: wait briefly.
        if let error = FileLockWait.lockExclusively(descriptor, fileSystem: fileSystem) {
            if error.code == EWOULDBLOCK { throw .storeInUse(path: url.path) }
            throw .storageFailure("cannot lock \(url.path) to delete it (errno \(error.code))")
        }
        willRename()
        try remove(url, fileSystem: fileSystem)
    }

    /// Removes a user's directory the same way, holding the lock of every store in it (`.storeInUse` if
    /// an app, in this process or another, has one open) from the check until it is renamed aside, so no
    /// app writes to a store deleted under it.
    static func removeDirectory(_ url: URL, fileSystem: any FileSystem) throws(SyncError) {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
        var held: [Int32] = []
        defer { for descriptor in held { _ = close(descriptor) } }
        for entry in entries.sorted() where entry.hasSuffix(".synclog") {
            let path = url.appendingPathComponent(entry).path
            let descriptor = open(path, O_RDWR | O_CLOEXEC)
            guard descriptor >= 0 else {
                if errno == ENOENT { continue }
                throw .storageFailure("cannot open \(path) to delete it (errno \(errno))")
            }
            held.append(descriptor)
            if let error = FileLockWait.lockExclusively(descriptor, fileSystem: fileSystem) {
                if error.code == EWOULDBLOCK { throw .storeInUse(path: path) }
                throw .storageFailure("cannot lock \(path) to delete it (errno \(error.code))")
            }
        }
        try remove(url, fileSystem: fileSystem)
    }

    /// Deletes what interrupted deletions left in `directory`.
    static func sweep(_ directory: URL) {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for entry in entries where entry.hasPrefix(tombstonePrefix) {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(entry))
        }
    }
}
