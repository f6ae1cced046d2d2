import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The API keys file of `sync-server --api-keys FILE`: which keys the server accepts and which partitions
/// each may sync, as `SyncServer.Authentication.apiKeys` takes them.
///
/// The format is plain UTF-8 text, one key per line:
///
/// ```
/// # Comments start with '#'; blank lines are ignored.
/// # A key, then the partitions it may sync: exact names, or a prefix ending in '*' ('*' alone: all).
/// alice-key-1   tasks notes
/// bob-key-2     shared/*
/// admin-key-3   *
/// viewer-key-4  read:shared/*
/// ```
///
/// Keys and patterns are separated by spaces or tabs and contain neither; a key must name at least one
/// pattern, and appear once. A pattern may sync its partitions (read, upload, and create one the server
/// does not hold yet), or, marked `read:`, only read those the server holds (binding one it does not is
/// refused with `.permissionDenied`, and so is an upload). `write:` marks a pattern read-write, as none does
/// (`write:read:x` names the partition `read:x`).
public enum APIKeysFile {
    /// The largest keys file read, in bytes (1 MiB).
    public static let maximumSize = 1 << 20

    /// Why a keys file was refused. Line numbers start at 1.
    public enum Error: Swift.Error, Sendable, Hashable, CustomStringConvertible {
        /// The file could not be read.
        case unreadable(path: String, reason: String)
        /// The file is larger than `maximumSize`.
        case tooLarge(bytes: Int)
        /// The file is not valid UTF-8.
        case notUTF8
        /// A key has no partition pattern.
        case noPartitions(line: Int)
        /// A key appears a second time.
        case duplicateKey(line: Int)

        public var description: String {
            switch self {
            case .unreadable(let path, let reason): "cannot read the API keys file \(path): \(reason)"
            case .tooLarge(let bytes): "the API keys file has \(bytes) bytes; the limit is \(APIKeysFile.maximumSize)"
            case .notUTF8: "the API keys file is not UTF-8 text"
            case .noPartitions(let line): "line \(line): a key must be followed by at least one partition"
            case .duplicateKey(let line): "line \(line): this key appears on an earlier line too"
            }
        }
    }

    /// The keys and their partition patterns in `text`.
    ///
    /// Lines end with LF or CRLF, and a byte-order mark at the start is skipped. The text is split by
    /// Unicode scalars, not characters: "\r\n" is one `Character`, so splitting characters at "\n" kept a
    /// CRLF file as one line (every later key became a pattern of the first).
    public static func parse(_ text: String) throws(Error) -> [String: Set<String>] {
        var keys: [String: Set<String>] = [:]
        var scalars = Substring(text).unicodeScalars
        if scalars.first == "\u{FEFF}" { scalars = scalars.dropFirst() }
        for (index, line) in scalars.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let content =
                line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first
                ?? line[
                    line.startIndex..<line.startIndex]
            let fields = content.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }).map {
                String(String.UnicodeScalarView($0))
            }
            guard let key = fields.first else { continue }
            guard fields.count > 1 else { throw .noPartitions(line: index + 1) }
            guard keys[key] == nil else { throw .duplicateKey(line: index + 1) }
            keys[key] = Set(fields.dropFirst())
        }
        return keys
    }

    /// Warnings about the file at `path` for the operator (empty when there is nothing to say): a keys
    /// file that users other than its owner and group can read gives the keys away.
    public static func warnings(path: String) -> [String] {
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & 0o004 != 0 else { return [] }
        let mode = String(status.st_mode & 0o777, radix: 8)
        return ["the API keys file \(path) can be read by every user (mode \(mode)): chmod 600 it"]
    }

    /// The keys in the file at `path` (read off the calling thread's responsibility: call it at start-up).
    public static func load(path: String) throws(Error) -> [String: Set<String>] {
        let data: Data
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            if let size = attributes[.size] as? Int, size > maximumSize { throw Error.tooLarge(bytes: size) }
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch let error as Error {
            throw error
        } catch {
            throw .unreadable(path: path, reason: "\(error.localizedDescription)")
        }
        guard data.count <= maximumSize else { throw .tooLarge(bytes: data.count) }
        guard let text = String(data: data, encoding: .utf8) else { throw .notUTF8 }
        return try parse(text)
    }
}
