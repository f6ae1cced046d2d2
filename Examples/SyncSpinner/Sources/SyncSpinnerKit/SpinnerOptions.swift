import SyncEngine

/// The command line of `sync-spinner`, parsed and checked.
public struct SpinnerOptions: Sendable, Equatable {
    /// How many changesets the writer writes.
    public var changesets = 200
    /// How many bytes they hold together.
    public var totalBytes = 8_000_000
    /// The seed of the workload's sizes and bytes.
    public var seed: UInt64 = 1
    /// Seconds the writer starts suspended (writing offline) before it resumes; 0: online from the start.
    public var offlineSeconds = 0.0
    /// Seconds after which the run gives up with exit status 1.
    public var timeoutSeconds = 120.0
    /// Keep the temporary directory instead of removing it at exit.
    public var keep = false
    /// A running `sync-server` to sync through instead of an embedded server (`--server ws://host:port`,
    /// read with `SyncEndpoint(url:)`).
    public var server: SyncEndpoint?
    /// The API key to log in with (anonymous without one).
    public var apiKey: String?
    /// How much the engine logs to standard error.
    public var logLevel: SyncLogLevel = .warn
    /// `--watch-server`: print the server's metrics line by line instead of running a workload.
    public var watchServer = false
    /// Seconds between two readings of the server's metrics.
    public var watchInterval = 1.0
    /// How many readings to print (`nil`: until interrupted).
    public var watchCount: Int?
    /// `--help` was given.
    public var showHelp = false

    public init() {}

    public static func == (lhs: SpinnerOptions, rhs: SpinnerOptions) -> Bool {
        lhs.changesets == rhs.changesets && lhs.totalBytes == rhs.totalBytes && lhs.seed == rhs.seed
            && lhs.offlineSeconds == rhs.offlineSeconds && lhs.timeoutSeconds == rhs.timeoutSeconds
            && lhs.keep == rhs.keep && lhs.server == rhs.server
            && lhs.apiKey == rhs.apiKey && lhs.logLevel == rhs.logLevel && lhs.showHelp == rhs.showHelp
            && lhs.watchServer == rhs.watchServer && lhs.watchInterval == rhs.watchInterval
            && lhs.watchCount == rhs.watchCount
    }

    /// Why a command line was refused: printed with the usage, exit status 64.
    public struct UsageError: Error, Equatable, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// The usage text: every option with its default.
    public static let usage = """
        usage: sync-spinner [options]

        Syncs a workload from a writer app to a reader app through a sync server and shows the progress.

        options:
          --changesets N        changesets to write (default: 200)
          --size BYTES          their total size in bytes, in sizes of 1 KiB to 256 KiB (default: 8000000)
          --seed N              seed of the workload (default: 1)
          --offline-for SECONDS start the writer offline for this long, then resume (default: 0)
          --timeout SECONDS     give up after this long, exit status 1 (default: 120)
          --keep                keep the temporary directory (default: removed at exit)
          --server URL          sync through a running sync-server, e.g. ws://127.0.0.1:9000
                                (default: an embedded server)
          --api-key KEY         log in with this API key (default: anonymous)
          --log-level LEVEL     off, fatal, error, warn, info, detail, debug or trace (default: warn)
          --watch-server        with --server: print the server's metrics (its /metrics page) as one
                                line per reading instead of running a workload (default: off)
          --watch-interval SECONDS
                                seconds between readings (default: 1)
          --watch-count N       stop after N readings (default: until Ctrl-C)
          --help                show this help

        exit status: 0 when the reader holds exactly what the writer wrote; 1 on a sync failure or
        timeout; 64 on bad usage; 130 on Ctrl-C; 143 on SIGTERM.
        """

    /// Parses `arguments` (without the program name).
    public static func parse(_ arguments: [String]) throws(UsageError) -> SpinnerOptions {
        var options = SpinnerOptions()
        var remaining = arguments[...]
        func value(for option: String) throws(UsageError) -> String {
            guard let value = remaining.popFirst() else { throw UsageError(message: "\(option) needs a value") }
            return value
        }
        while let argument = remaining.popFirst() {
            switch argument {
            case "--changesets":
                options.changesets = try integer(try value(for: argument), argument, in: 1...1_000_000)
            case "--size":
                options.totalBytes = try integer(try value(for: argument), argument, in: 1...(1 << 40))
            case "--seed":
                let text = try value(for: argument)
                guard let seed = UInt64(text) else {
                    throw UsageError(message: "--seed needs a whole number, not \(text)")
                }
                options.seed = seed
            case "--offline-for":
                options.offlineSeconds = try seconds(try value(for: argument), argument, allowZero: true)
            case "--timeout":
                options.timeoutSeconds = try seconds(try value(for: argument), argument, allowZero: false)
            case "--keep":
                options.keep = true
            case "--server":
                let text = try value(for: argument)
                do throws(SyncEndpointURLError) {
                    options.server = try SyncEndpoint(url: text)
                } catch {
                    throw UsageError(message: "--server needs ws://host:port: \(error)")
                }
            case "--api-key":
                let key = try value(for: argument)
                guard !key.isEmpty else { throw UsageError(message: "--api-key needs a key") }
                options.apiKey = key
            case "--log-level":
                let text = try value(for: argument)
                guard let level = SyncLogLevel(name: text) else {
                    throw UsageError(
                        message: "--log-level must be one of off, fatal, error, warn, info, detail, debug, trace")
                }
                options.logLevel = level
            case "--watch-server":
                options.watchServer = true
            case "--watch-interval":
                options.watchInterval = try seconds(try value(for: argument), argument, allowZero: false)
            case "--watch-count":
                options.watchCount = try integer(try value(for: argument), argument, in: 1...1_000_000)
            case "--help", "-h":
                options.showHelp = true
            default:
                throw UsageError(message: "unknown option \(argument)")
            }
        }
        if options.watchServer && options.server == nil {
            throw UsageError(message: "--watch-server needs --server ws://host:port")
        }
        guard options.totalBytes >= options.changesets else {
            throw UsageError(message: "--size must be at least one byte per changeset (\(options.changesets))")
        }
        // The largest changeset of a workload is at most 256 KiB or the average rounded up.
        guard (options.totalBytes + options.changesets - 1) / options.changesets <= WireProtocol.maximumChangesetSize
        else {
            throw UsageError(
                message: "--size allows at most \(WireProtocol.maximumChangesetSize) bytes per changeset on average")
        }
        return options
    }

    private static func integer(_ text: String, _ option: String, in range: ClosedRange<Int>) throws(UsageError) -> Int
    {
        guard let number = Int(text), range.contains(number) else {
            throw UsageError(
                message: "\(option) needs a whole number from \(range.lowerBound) to \(range.upperBound), not \(text)")
        }
        return number
    }

    private static func seconds(_ text: String, _ option: String, allowZero: Bool) throws(UsageError) -> Double {
        guard let number = Double(text), number.isFinite, allowZero ? number >= 0 : number > 0, number <= 86_400 else {
            throw UsageError(message: "\(option) needs a number of seconds\(allowZero ? "" : " above 0"), not \(text)")
        }
        return number
    }
}
