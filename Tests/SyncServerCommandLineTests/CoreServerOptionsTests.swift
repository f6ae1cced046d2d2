import SyncServer
import SyncServerCommandLine
import Testing

/// The options the server programs share, parsed in process (the programs' own tests run them as
/// subprocesses).
@Suite struct CoreServerOptionsTests {
    /// A program whose only option of its own is `--data DIR`, recording what it was offered.
    private struct Program: ServerCommandLine {
        static let programName = "test-server"
        static let usage = "usage: test-server --port PORT --data DIR"
        var core = CoreServerOptions()
        var dataDirectory: String?
        var offered: [String] = []

        mutating func consume(_ argument: String, from arguments: inout ArgumentCursor) throws(UsageError) -> Bool {
            offered.append(argument)
            guard argument == "--data" else { return false }
            dataDirectory = try arguments.value(for: argument)
            return true
        }

        func validate() throws(UsageError) {
            guard dataDirectory != nil else { throw UsageError("--data is required") }
        }
    }

    /// Parses `arguments` plus `--data d` as `Program`; returns the shared options and what the program was
    /// offered.
    private func parse(_ arguments: [String]) throws(UsageError) -> (CoreServerOptions, offered: [String]) {
        let program = try Program.parse(arguments + ["--data", "d"])
        return (program.core, program.offered.filter { $0 != "--data" })
    }

    @Test("each shared flag sets its option and is not offered to the program")
    func sharedFlags() throws {
        let (options, offered) = try parse([
            "--port", "8080", "--host", "0.0.0.0", "--api-keys", "keys", "--max-message-bytes", "2048",
            "--log-level", "info", "--max-offline", "30d", "--max-connections", "7",
            "--max-sessions-per-connection", "3", "--max-partitions", "9", "--max-idle-partitions", "0",
            "--max-handshaking-connections", "5", "--idle-timeout", "2m", "--handshake-timeout", "5s",
            "--hello-timeout", "30s", "--allow-origin",
            "https://a.example", "--allow-origin", "https://b.example",
        ])
        #expect(offered.isEmpty)
        var expected = CoreServerOptions()
        expected.port = 8080
        expected.host = "0.0.0.0"
        expected.apiKeysFile = "keys"
        expected.maximumMessageBytes = 2048
        expected.logLevel = .info
        expected.maximumOfflineTime = .seconds(30 * 86_400)
        expected.maximumConnections = 7
        expected.maximumSessionsPerConnection = 3
        expected.maximumPartitions = 9
        expected.maximumIdlePartitions = 0
        expected.maximumHandshakingConnections = 5
        expected.idleTimeout = .seconds(120)
        expected.handshakeTimeout = .seconds(5)
        expected.helloTimeout = .seconds(30)
        expected.allowedOrigins = ["https://a.example", "https://b.example"]
        #expect(options == expected)
        #expect(options.originPolicy == .allowList(["https://a.example", "https://b.example"]))
    }

    @Test("the options make the server's configuration and WebSocket limits")
    func configurationAndLimits() throws {
        let (options, _) = try parse([
            "--port", "0", "--max-message-bytes", "4096", "--max-connections", "7", "--max-sessions-per-connection",
            "3", "--max-partitions", "9", "--max-idle-partitions", "2", "--max-offline", "1h", "--log-level",
            "debug", "--idle-timeout", "20s", "--handshake-timeout", "4s", "--hello-timeout", "3s", "--allow-origin",
            "*", "--max-handshaking-connections", "6",
        ])
        let configuration = options.configuration(store: InMemoryPartitionStore(), authentication: .anonymousAllowed)
        #expect(configuration.maximumMessageBytes == 4096)
        #expect(configuration.maximumConnections == 7)
        #expect(configuration.maximumSessionsPerConnection == 3)
        #expect(configuration.maximumPartitions == 9)
        #expect(configuration.maximumIdlePartitions == 2)
        #expect(configuration.maximumOfflineTime == .seconds(3_600))
        #expect(configuration.logLevel == .debug)
        let limits = options.webSocketLimits
        #expect(limits.maximumMessageBytes == 4096)
        #expect(limits.idleTimeout == .seconds(20))
        #expect(limits.handshakeTimeout == .seconds(4))
        #expect(limits.helloTimeout == .seconds(3))
        #expect(limits.originPolicy == .anyOrigin)
        #expect(limits.maximumHandshakingConnections == 6)
    }

    @Test("without --max-handshaking-connections the WebSocket limits keep their default, 1,024")
    func defaultHandshakingConnections() throws {
        let (options, _) = try parse(["--port", "0"])
        #expect(options.maximumHandshakingConnections == 1_024)
        #expect(
            options.webSocketLimits.maximumHandshakingConnections == WebSocketLimits().maximumHandshakingConnections)
        #expect(options.webSocketLimits.maximumHandshakingConnections == 1_024)
    }

    @Test("without --hello-timeout the hello deadline is production's 10 s, in the WebSocket limits too")
    func defaultHelloTimeout() throws {
        let (options, _) = try parse(["--port", "0"])
        #expect(options.helloTimeout == .seconds(10))
        #expect(options.webSocketLimits.helloTimeout == .seconds(10))
        let (longest, _) = try parse(["--port", "0", "--hello-timeout", "1h"])
        #expect(longest.webSocketLimits.helloTimeout == .seconds(3_600))
    }

    @Test("without --allow-origin: no policy of its own; in full, none when anonymous, any with keys")
    func defaultOriginPolicy() throws {
        let (options, _) = try parse(["--port", "0"])
        #expect(options.originPolicy == nil)
        #expect(options.originPolicy(anonymous: true) == .allowList([]))
        #expect(options.originPolicy(anonymous: false) == .anyOrigin)
    }

    @Test(
        "a value out of range names the option, the range and the value",
        arguments: [
            (["--max-connections", "0"], "--max-connections must be a whole number in 1…1000000, not 0"),
            (["--max-idle-partitions", "-1"], "--max-idle-partitions must be a whole number in 0…1000000, not -1"),
            (["--max-partitions", "many"], "--max-partitions must be a whole number in 1…10000000, not many"),
            (
                ["--idle-timeout", "5s"],
                "--idle-timeout must be a duration in 10s…86400s (a whole number with s, m, h or d), not 5s"
            ),
            (
                ["--handshake-timeout", "10"],
                "--handshake-timeout must be a duration in 1s…300s (a whole number with s, m, h or d), not 10"
            ),
            (
                ["--hello-timeout", "0s"],
                "--hello-timeout must be a duration in 1s…3600s (a whole number with s, m, h or d), not 0s"
            ),
            (
                ["--hello-timeout", "2h"],
                "--hello-timeout must be a duration in 1s…3600s (a whole number with s, m, h or d), not 2h"
            ),
            (["--port", "70000"], "--port must be 0…65535, not 70000"),
            (["--max-message-bytes", "1023"], "--max-message-bytes must be 1024…16777216, not 1023"),
            (["--log-level", "loud"], "unknown log level loud"),
            (
                ["--max-offline", "3w"],
                "--max-offline must be a positive whole number with a unit: s, m, h or d (e.g. 30d), not 3w"
            ),
            (["--host"], "--host needs a value"),
            (["--host", "--port"], "--host needs a value"),
        ])
    func outOfRange(arguments: [String], message: String) {
        #expect(throws: UsageError(message)) { try parse(["--port", "0"] + arguments) }
    }

    @Test("an argument that is not a shared flag is left to the program, with its value")
    func programFlagLeftToTheCaller() throws {
        var core = CoreServerOptions()
        var cursor = ArgumentCursor(["--data", "/srv/sync", "--port", "1"])
        let argument = cursor.next() ?? ""
        #expect(argument == "--data")
        let taken = try core.consume(argument, from: &cursor)
        #expect(!taken)
        #expect(core == CoreServerOptions())
        // Nothing was read: the program's value is still next.
        #expect(try cursor.value(for: argument) == "/srv/sync")

        let program = try Program.parse(["--data", "/srv/sync", "--port", "1"])
        #expect(program.offered == ["--data"])
        #expect(program.dataDirectory == "/srv/sync")
        #expect(program.core.port == 1)
    }

    @Test("an argument neither takes is unknown; --port, then the program's own, required unless --help")
    func unknownAndRequired() throws {
        #expect(throws: UsageError("unknown argument --bogus")) { try parse(["--port", "0", "--bogus"]) }
        #expect(throws: UsageError("--port is required")) { try Program.parse(["--data", "d"]) }
        #expect(throws: UsageError("--data is required")) { try Program.parse(["--port", "0"]) }
        #expect(try Program.parse(["--help"]).core.showHelp)
        #expect(try Program.parse(["-h"]).core.showHelp)
    }

    @Test(
        "parseDuration: a positive whole number with s, m, h or d",
        arguments: [
            ("90s", Duration.seconds(90)), ("45m", .seconds(2_700)), ("12h", .seconds(43_200)),
            ("30d", .seconds(2_592_000)),
        ])
    func durations(text: String, duration: Duration) {
        #expect(parseDuration(text) == duration)
    }

    @Test(
        "parseDuration: nil without a unit, with another unit, zero, a sign, or overflow",
        arguments: ["30", "3w", "0d", "-1h", "+1h", "d", "", "99999999999999999d"])
    func badDurations(text: String) {
        #expect(parseDuration(text) == nil)
    }
}
