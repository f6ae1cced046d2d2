import SyncWire

extension SyncServer {
    /// Which credentials a server accepts in `hello`, and what each may sync.
    public enum Authentication: Sendable {
        /// Every credential is accepted, `.anonymous` and any API key alike, and may sync every partition.
        case anonymousAllowed
        /// Only the listed API keys are accepted; each may bind only the partitions in its set, or every
        /// partition when its set contains `"*"`. `.anonymous` and unknown keys are refused with
        /// `.authenticationFailed`; binding a partition outside the key's set is refused with
        /// `.permissionDenied`.
        case apiKeys([String: Set<String>])

        /// What `credential` may sync, or `nil` when it is refused.
        func access(for credential: WireCredential) -> PartitionAccess? {
            switch (self, credential) {
            case (.anonymousAllowed, _):
                return .all
            case (.apiKeys, .anonymous):
                return nil
            case (.apiKeys(let keys), .apiKey(let key)):
                guard let partitions = keys[key] else { return nil }
                return partitions.contains("*") ? .all : .only(partitions)
            }
        }
    }
}
