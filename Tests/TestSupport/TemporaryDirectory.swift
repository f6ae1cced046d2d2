import Foundation

/// A fresh directory under the system's temporary directory, named after the test bundle; removed by
/// `remove()`.
public struct TemporaryDirectory: Sendable {
    public let url: URL

    public init() {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(ProcessInfo.processInfo.processName)-\(UUID().uuidString)", isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    public func remove() { try? FileManager.default.removeItem(at: url) }
}
