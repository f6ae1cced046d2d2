import SyncWire

extension SyncServer {
    /// Which credentials a server accepts in `hello`, and what each may sync.
    public enum Authentication: Sendable {
        /// Every credential is accepted, `.anonymous` and any API key alike, and may sync every partition.
        case anonymousAllowed
        /// Only the listed API keys are accepted; each may bind only the partitions its patterns allow: an
        /// exact partition name, or a prefix followed by `*` (`"shared/*"`; `"*"` alone allows every
        /// partition). `.anonymous` and unknown keys are refused with `.authenticationFailed`; binding a
        /// partition the key's patterns do not allow is refused with `.permissionDenied`.
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
