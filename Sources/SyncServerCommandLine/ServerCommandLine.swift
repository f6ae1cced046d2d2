import SyncServer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A server program's command line: the options every server takes (`core`) and the program's own.
///
/// A conforming type takes its own options in `consume(_:from:)` and checks them in `validate()`; the
/// parse loop, `unknown argument`, `--port is required`, `--help` and the exit on bad usage are shared:
///
/// ```swift
/// struct Options: ServerCommandLine {
///     static let programName = "my-server"
///     static let usage = "usage: my-server --port PORT --data DIR [options]"
///     var core = CoreServerOptions()
///     var dataDirectory: String?
///     mutating func consume(_ argument: String, from arguments: inout ArgumentCursor) throws(UsageError) -> Bool {
///         guard argument == "--data" else { return false }
///         dataDirectory = try arguments.value(for: argument)
///         return true
///     }
///     func validate() throws(UsageError) {
///         guard dataDirectory != nil else { throw UsageError("--data is required") }
///     }
/// }
/// let options = Options.parseOrExit()
/// ```
public protocol ServerCommandLine {
    /// The program's name, first on its error lines (`my-server: --port is required`).
    static var programName: String { get }
    /// The text `--help` prints and a usage error follows with.
    static var usage: String { get }
    /// The shared options.
    var core: CoreServerOptions { get set }
    /// The defaults: nothing given yet.
    init()
    /// Takes `argument` if it is one of the program's own options, reading its value from `arguments` and
    /// checking it; returns `false`, having read nothing, when it is not one. Asked only about arguments
    /// that are not shared options.
    mutating func consume(_ argument: String, from arguments: inout ArgumentCursor) throws(UsageError) -> Bool
    /// Checks what only the whole command line shows (a required option, options that go together); called
    /// after `--port is required` was checked, and not with `--help`.
    func validate() throws(UsageError)
}

extension ServerCommandLine {
    /// The command line `arguments` (the program's name not among them), parsed: each argument offered
    /// to `CoreServerOptions.consume(_:from:)`, then to the program's `consume(_:from:)`. Throws
    /// `unknown argument <argument>` for one neither takes, the first usage error either throws, and —
    /// unless `--help` was given — `--port is required`, then what `validate()` throws.
    public static func parse(_ arguments: [String]) throws(UsageError) -> Self {
        var options = Self()
        var cursor = ArgumentCursor(arguments)
        while let argument = cursor.next() {
            if try options.core.consume(argument, from: &cursor) { continue }
            if try options.consume(argument, from: &cursor) { continue }
            throw UsageError("unknown argument \(argument)")
        }
        if !options.core.showHelp {
            guard options.core.port != nil else { throw UsageError("--port is required") }
            try options.validate()
        }
        return options
    }

    /// The process's command line, parsed (see `parse(_:)`). On a usage error prints
    /// `<programName>: <error>`, a blank line and `usage` to standard error and exits 64; with `--help`
    /// prints `usage` to standard output and exits 0.
    public static func parseOrExit(_ arguments: [String] = Array(CommandLine.arguments.dropFirst())) -> Self {
        let options: Self
        do {
            options = try parse(arguments)
        } catch {
            FileHandleOutput.standardError("\(programName): \(error)\n\n\(usage)\n")
            exit(64)
        }
        if options.core.showHelp {
            FileHandleOutput.standardOutput(usage + "\n")
            exit(0)
        }
        return options
    }

    /// Ends the process with `status` after `<programName>: <message>` on standard error: a program that
    /// cannot start (status 1) says why.
    public static func fail(_ message: String, status: Int32) -> Never {
        FileHandleOutput.standardError("\(programName): \(message)\n")
        exit(status)
    }

    /// The first thing a server's `main` does: takes SIGINT, SIGTERM and SIGHUP over
    /// (`StopSignal.install(programName:)`, before any other thread starts, so a signal right after the
    /// URL line stops the server cleanly), parses the command line or exits (`parseOrExit(_:)`), and
    /// ignores SIGPIPE (a peer gone mid-write fails that write, not the process).
    public static func start(
        _ arguments: [String] = Array(CommandLine.arguments.dropFirst())
    ) -> (options: Self, stopSignal: StopSignal) {
        let stopSignal = StopSignal.install(programName: programName)
        let options = parseOrExit(arguments)
        signal(SIGPIPE, SIG_IGN)
        return (options, stopSignal)
    }

    /// `core.authentication()`, or — when the `--api-keys` file is missing or malformed — `fail` with
    /// its error and status 1.
    public func authenticationOrFail() -> SyncServer.Authentication {
        do { return try core.authentication() } catch { Self.fail("\(error)", status: 1) }
    }

    /// The last thing a front end's `main` does: waits for SIGINT or SIGTERM, says
    /// `<programName>: SIGTERM: stopping` on standard error, runs `stopping` (stop the server, close the
    /// store), says `<programName> stopped` on standard output and exits 0.
    @MainActor
    public static func exitWhenStopped(by stopSignal: StopSignal, stopping: () async -> Void) async -> Never {
        let received = await stopSignal.wait()
        FileHandleOutput.standardError("\(programName): \(received == SIGINT ? "SIGINT" : "SIGTERM"): stopping\n")
        await stopping()
        FileHandleOutput.standardOutput("\(programName) stopped\n")
        exitAfterStopping()
    }
}

/// Ends a server process with status 0 once it stopped: everything is written (`FileHandleOutput` writes
/// straight to the descriptors, `JSONLogLine.flush()` ran) and the store is closed, so `_exit` skips what
/// `exit` would run — atexit handlers and static destructors — while other threads (dispatch, the event
/// loop, the signal thread) are still alive. A fresh-clone AddressSanitizer run (S23-C) saw a `sync-server`
/// print "sync-server stopped" and then not exit within 60 s. (The same symptom came back with `_exit`, and
/// that time the cause was the test helper's: another test's child had inherited the server's output pipe,
/// so the test saw no end of output until that child ended; `ChildProcess` now starts one child at a time.)
func exitAfterStopping() -> Never {
    _exit(0)
}
