extension CoreServerOptions {
    /// The usage lines of the shared options, each block whole lines indented by two spaces and without a
    /// final newline, for a program's usage text to place among its own (one block a line of its literal):
    ///
    /// ```swift
    /// static let usage = """
    ///     options:
    ///     \(CoreServerOptions.Usage.port)
    ///       --data DIR                where partition logs are kept (required)
    ///     \(CoreServerOptions.Usage.common)
    ///     """
    /// ```
    public enum Usage {
        /// `--port`.
        public static let port = """
              --port PORT               the TCP port to listen on; 0 picks a free one (required)
            """

        /// `--host`, `--api-keys`, `--max-message-bytes`, `--log-level`.
        public static let common = """
              --host HOST               the address to listen on (default: 127.0.0.1)
              --api-keys FILE           accept only the API keys in FILE, each for its partitions
                                        (default: anyone may sync anything; see docs/Server.md)
              --max-message-bytes N     the largest message accepted or sent (default: 16777216)
              --log-level LEVEL         off, fatal, error, warn, info, detail, debug or trace (default: warn)
            """

        /// `--max-offline`.
        public static let maximumOffline = """
              --max-offline DURATION    forget a client unseen for longer (e.g. 30d, 12h, 45m, 90s); it must
                                        reset its copy when it returns (default: never forget)
            """

        /// `--max-connections`, `--max-handshaking-connections`, `--max-sessions-per-connection`,
        /// `--max-partitions`, `--max-idle-partitions`.
        public static let limits = """
              --max-connections N       connections open at once, 1…1000000 (default: 10000)
              --max-handshaking-connections N
                                        connections in their opening handshake at once; past it a new
                                        one is closed at once, 1…1000000 (default: 1024)
              --max-sessions-per-connection N
                                        sessions one connection may bind, 1…100000 (default: 1000)
              --max-partitions N        live partitions, 1…10000000 (default: 100000)
              --max-idle-partitions N   idle partitions kept loaded, 0…1000000 (default: 128)
            """

        /// `--idle-timeout`, `--handshake-timeout`, `--hello-timeout`.
        public static let timeouts = """
              --idle-timeout DURATION   drop a connection silent for this long, 10s…1d (default: 300s)
              --handshake-timeout DURATION
                                        time for the opening handshake, 1s…300s (default: 10s)
              --hello-timeout DURATION  time from the handshake to the client's hello answered; past it
                                        the connection is closed with 1008, 1s…1h (default: 10s)
            """

        /// `--allow-origin`.
        public static let allowOrigin = """
              --allow-origin ORIGIN     let web pages of ORIGIN (e.g. https://app.example.com) connect;
                                        repeatable; * allows every page (default: none when anonymous,
                                        every page with --api-keys)
            """

        /// `--help`.
        public static let help = """
              --help                    show this help
            """
    }
}
