extension SyncServer {
    /// How a `SyncServer` stores, authenticates and sizes its traffic.
    public struct Configuration: Sendable {
        /// Where partition logs are kept. Default: a new `InMemoryPartitionStore`.
        public var store: any PartitionStore
        /// Which credentials may connect and which partitions each may sync. Default: `.anonymousAllowed`.
        public var authentication: Authentication
        /// The most changeset bytes the server puts into one `download` message. Default: 64 KiB.
        ///
        /// A run of entries larger than this (a bind's backlog, or a big upload forwarded to other
        /// sessions) goes out as several `download` messages, each with at most this many changeset bytes
        /// but at least one changeset, each with the exact `remainingBytes` of the run still to come, so
        /// clients see progress in steps. Acknowledgements carry no bytes and ride along with the
        /// changesets around them.
        public var maximumDownloadMessageBytes: Int
        /// The largest changeset, in bytes, an upload may carry. Default: 16 MiB.
        ///
        /// An upload holding a bigger one is refused as a whole with `.messageTooLarge` for its session
        /// (fatal: the server also forgets the session).
        public var maximumChangesetBytes: Int

        /// A configuration; every parameter has the default described on its property.
        public init(
            store: any PartitionStore = InMemoryPartitionStore(),
            authentication: Authentication = .anonymousAllowed,
            maximumDownloadMessageBytes: Int = 64 * 1024,
            maximumChangesetBytes: Int = 16 * 1024 * 1024
        ) {
            self.store = store
            self.authentication = authentication
            self.maximumDownloadMessageBytes = maximumDownloadMessageBytes
            self.maximumChangesetBytes = maximumChangesetBytes
        }
    }
}
