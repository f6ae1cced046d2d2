import Foundation
import SyncServer
import Testing

@testable import SyncServerCommandLine

/// The operator options `sync-server` and `sync-server-nio` share (`OperatorOptions`), and the JSON log
/// line both write, in process (the programs' own tests run them as subprocesses).
@Suite struct OperatorOptionsTests {
    /// `arguments` offered one by one to `OperatorOptions.consume(_:from:)`; those it does not take are
    /// returned.
    private func parse(_ arguments: [String]) throws(UsageError) -> (OperatorOptions, rest: [String]) {
        var options = OperatorOptions()
        var cursor = ArgumentCursor(arguments)
        var rest: [String] = []
        while let argument = cursor.next() {
            if try !options.consume(argument, from: &cursor) { rest.append(argument) }
        }
        return (options, rest)
    }

    @Test("each operator flag sets its option; other arguments are left alone")
    func flags() throws {
        let (options, rest) = try parse([
            "--log-format", "json", "--metrics-port", "9100", "--max-partitions-on-disk", "5", "--data",
            "--drain-timeout", "90s",
        ])
        #expect(options.logFormat == .json)
        #expect(options.metricsPort == 9100)
        #expect(options.maximumPartitionsOnDisk == 5)
        #expect(options.drainTimeout == .seconds(90))
        #expect(rest == ["--data"])
        let defaults = try parse([]).0
        #expect(defaults == OperatorOptions())
        #expect(defaults.logFormat == .text && defaults.metricsPort == nil && defaults.drainTimeout == nil)
        #expect(defaults.maximumPartitionsOnDisk == 1_000_000)
    }

    @Test(
        "a bad value names the flag, its range and the value",
        arguments: [
            (["--log-format", "xml"], ["--log-format must be", "text or json", "not xml"]),
            (["--metrics-port", "65536"], ["--metrics-port must be", "0…65535", "not 65536"]),
            (["--max-partitions-on-disk", "0"], ["--max-partitions-on-disk must be", "1…100000000", "not 0"]),
            (["--drain-timeout", "2h"], ["--drain-timeout must be", "1s…3600s", "not 2h"]),
            (["--drain-timeout"], ["--drain-timeout needs a value"]),
        ])
    func badValues(arguments: [String], fragments: [String]) {
        do {
            _ = try parse(arguments)
            Issue.record("\(arguments) was accepted")
        } catch {
            for fragment in fragments { #expect(error.message.contains(fragment), "\(error)") }
        }
    }

    @Test("a JSON log line escapes quotes, backslashes and control characters and parses back to its fields")
    func jsonLine() throws {
        let message = "quote\" backslash\\ newline\n tab\t bell\u{7} line\u{2028} é"
        let event = SyncLogEvent(date: Date(), level: .warn, category: "sync.server", message: message)
        let line = JSONLogLine.line(event, connection: nil)
        #expect(!line.contains("\n"))
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        let fields = try #require(object)
        #expect(fields["message"] as? String == message)
        #expect(fields["level"] as? String == "warn")
        #expect(fields["category"] as? String == "sync.server")
        #expect(fields["connection"] is NSNull && fields["peer"] is NSNull)
    }
}
