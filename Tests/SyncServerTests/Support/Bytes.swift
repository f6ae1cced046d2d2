import SyncWire

/// `count` bytes all equal to `value`, for recognisable changesets.
func bytes(_ value: UInt8, count: Int = 4) -> [UInt8] { Array(repeating: value, count: count) }

/// The entries of `downloads`, in order.
func entries(of downloads: [Download]) -> [DownloadEntry] { downloads.flatMap(\.entries) }
