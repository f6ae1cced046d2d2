import SyncWire

extension SyncServer {
    /// Which credentials a server accepts in `hello`, and what each may sync.
    public enum Authentication: Sendable {
        /// Every credential is accepted, `.anonymous` and any API key alike, and may sync every partition.
        case anonymousAllowed
        /// Only the listed API keys are accepted; each may bind only the partitions its patterns allow: an
        /// exact partition name, or a prefix followed by `*` (`"shared/*"`; `"*"` alone allows every
        /// partition). `.anonymous` and unknown keys are refused with `.authenticationFailed`; binding a
        /// partition the key's patterns do not allow is refused with `.permissionDenied`. A pattern marked
        /// `read:` (`"read:shared/*"`) allows reading only: binding a partition the store holds and
        /// downloading it; binding one the store does not hold (which would create it) and uploading are
        /// refused with `.permissionDenied`. Unmarked patterns (or marked `write:`) allow uploads and
        /// creating partitions too; a partition several patterns match gets the widest permission.
        /// `APIKeysFile` reads this map from a file.
        case apiKeys([String: Set<String>])

        /// What `credential` may sync, or `nil` when it is refused.
        func access(for credential: WireCredential) -> PartitionAccess? {
            switch (self, credential) {
            case (.anonymousAllowed, _):
                return .all
            case (.apiKeys, .anonymous):
                return nil
            case (.apiKeys(let keys), .apiKey(let key)):
                // Byte for byte: a dictionary matches canonically equivalent spellings (NFC, NFD) too.
                guard let index = keys.index(forKey: key), keys[index].key.utf8.elementsEqual(key.utf8) else {
                    return nil
                }
                return PartitionAccess(patterns: keys[index].value)
            }
        }
    }
}
