import SyncEngine
import Testing

@testable import SyncSpinnerKit

@Suite("Spinner options")
struct SpinnerOptionsTests {
    @Test("no arguments: every default")
    func defaults() throws {
        let options = try SpinnerOptions.parse([])
        #expect(options.changesets == 200)
        #expect(options.totalBytes == 8_000_000)
        #expect(options.seed == 1)
        #expect(options.offlineSeconds == 0)
        #expect(options.timeoutSeconds == 120)
        #expect(!options.keep)
        #expect(options.server == nil)
        #expect(options.apiKey == nil)
        #expect(options.logLevel == .warn)
        #expect(!options.showHelp)
        #expect(options == SpinnerOptions())
    }

    @Test("every option, in any order")
    func everyOption() throws {
        let options = try SpinnerOptions.parse([
            "--seed", "18446744073709551615", "--changesets", "7", "--size", "70000", "--offline-for", "2.5",
            "--timeout", "30", "--keep", "--server", "ws://[::1]:9000", "--api-key", "k-1", "--log-level", "debug",
            "--help",
        ])
        var expected = SpinnerOptions()
        expected.changesets = 7
        expected.totalBytes = 70_000
        expected.seed = .max
        expected.offlineSeconds = 2.5
        expected.timeoutSeconds = 30
        expected.keep = true
        expected.server = .webSocket(host: "::1", port: 9000)
        expected.apiKey = "k-1"
        expected.logLevel = .debug
        expected.showHelp = true
        #expect(options == expected)
        #expect(try SpinnerOptions.parse(["-h"]).showHelp)
        #expect(try SpinnerOptions.parse(["--offline-for", "0"]).offlineSeconds == 0)
        #expect(
            try SpinnerOptions.parse(["--server", "ws://example.com"]).server
                == .webSocket(host: "example.com", port: 80))
    }

    static let refused: [([String], String)] = [
        (["--bogus"], "unknown option --bogus"),
        (["--changesets"], "--changesets needs a value"),
        (["--changesets", "0"], "--changesets needs a whole number from 1 to 1000000, not 0"),
        (["--changesets", "1000001"], "--changesets needs a whole number from 1 to 1000000"),
        (["--changesets", "2.5"], "--changesets needs a whole number"),
        (["--size", "0"], "--size needs a whole number from 1"),
        (["--size", "-5"], "--size needs a whole number"),
        (["--seed", "-1"], "--seed needs a whole number, not -1"),
        (["--seed", "x"], "--seed needs a whole number, not x"),
        (["--offline-for", "-1"], "--offline-for needs a number of seconds, not -1"),
        (["--offline-for", "nan"], "--offline-for needs a number of seconds"),
        (["--offline-for", "86401"], "--offline-for needs a number of seconds"),
        (["--timeout", "0"], "--timeout needs a number of seconds above 0, not 0"),
        (["--timeout", "inf"], "--timeout needs a number of seconds above 0"),
        (["--server", "http://x:1"], "--server needs ws://host:port: the scheme http:// is not supported"),
        (["--server", "ws://x:1/path"], "--server needs ws://host:port: a path (/path) is not accepted"),
        (["--server", "ws://::1:9000"], "--server needs ws://host:port: an IPv6 address must be in brackets"),
        (["--server", "ws://x:0"], "--server needs ws://host:port: the port must be a number from 1 to 65535"),
        (["--api-key", ""], "--api-key needs a key"),
        (["--log-level", "loud"], "--log-level must be one of off, fatal, error, warn, info, detail, debug, trace"),
        (["--changesets", "10", "--size", "5"], "--size must be at least one byte per changeset (10)"),
        (["--changesets", "1", "--size", "16777216"], "--size allows at most"),
    ]

    @Test("a bad option or value is a usage error that says what is wrong", arguments: refused)
    func refuses(arguments: [String], message: String) {
        #expect {
            _ = try SpinnerOptions.parse(arguments)
        } throws: { error in
            guard let usage = error as? SpinnerOptions.UsageError else { return false }
            return usage.message.hasPrefix(message) || usage.message.contains(message)
        }
    }

    @Test("the usage names every option with its default")
    func usage() {
        for option in [
            "--changesets", "--size", "--seed", "--offline-for", "--timeout", "--keep", "--server", "--api-key",
            "--log-level", "--help",
        ] {
            #expect(SpinnerOptions.usage.contains(option), "\(option)")
        }
        #expect(SpinnerOptions.usage.contains("(default: 200)"))
        #expect(SpinnerOptions.usage.contains("(default: 8000000)"))
        #expect(SpinnerOptions.usage.contains("(default: 120)"))
    }
}
