/// Whether `host` (as a listener reports it) is a loopback address: only this machine can connect.
public func isLoopback(_ host: String) -> Bool {
    host == "localhost" || host == "::1" || host.hasPrefix("127.")
}

/// The warning every server program logs at start when it listens without `--api-keys` on an address
/// other machines can reach (`url`, on `host`): anyone may read and write every partition and create up
/// to `maximumPartitionsOnDisk` new ones. `nil` when there are keys or `host` is a loopback address.
public func anonymousAccessWarning(
    apiKeysFile: String?, host: String, url: String, maximumPartitionsOnDisk: Int
) -> String? {
    guard apiKeysFile == nil, !isLoopback(host) else { return nil }
    return "anonymous access on \(host), which is not a loopback address: anyone who can reach "
        + "\(url) may read and write every partition and create new ones (up to --max-partitions-on-disk "
        + "\(maximumPartitionsOnDisk)); give --api-keys FILE, or --host 127.0.0.1"
}
