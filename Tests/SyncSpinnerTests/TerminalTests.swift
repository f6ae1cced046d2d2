import Foundation
import Testing

@testable import SyncSpinnerKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `Terminal` on a real pseudo-terminal (and on a pipe): whether it is one, when it colours, how wide it
/// is, and what it writes.
@Suite("Terminal")
struct TerminalTests {
    /// A pseudo-terminal pair: the controller side (what a terminal emulator reads) and the terminal side
    /// (what a program writes to). Both closed at deinit.
    final class PseudoTerminal {
        let controller: Int32
        let terminal: Int32

        init() throws {
            controller = PseudoTerminal.openController()
            guard controller >= 0, let name = PseudoTerminal.terminalName(of: controller) else {
                throw POSIXError(.ENOTTY)
            }
            terminal = open(name, O_RDWR | O_NOCTTY)
            guard terminal >= 0 else { throw POSIXError(.ENOENT) }
            _ = fcntl(controller, F_SETFL, fcntl(controller, F_GETFL) | O_NONBLOCK)
        }

        deinit {
            close(terminal)
            close(controller)
        }

        #if canImport(Darwin)
            static func openController() -> Int32 { posix_openpt(O_RDWR | O_NOCTTY) }

            static func terminalName(of controller: Int32) -> String? {
                guard grantpt(controller) == 0, unlockpt(controller) == 0, let name = ptsname(controller) else {
                    return nil
                }
                return String(cString: name)
            }
        #else
            // Glibc's module leaves the XSI pseudo-terminal functions out: looked up at run time.
            static func function<T>(_ name: String, as type: T.Type) -> T? {
                guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }
                return unsafeBitCast(symbol, to: type)
            }

            static func openController() -> Int32 {
                typealias OpenPT = @convention(c) (Int32) -> Int32
                return function("posix_openpt", as: OpenPT.self)?(O_RDWR | O_NOCTTY) ?? -1
            }

            static func terminalName(of controller: Int32) -> String? {
                typealias Call = @convention(c) (Int32) -> Int32
                typealias NameInto = @convention(c) (Int32, UnsafeMutablePointer<CChar>, Int) -> Int32
                guard let grant = function("grantpt", as: Call.self), let unlock = function("unlockpt", as: Call.self),
                    let nameInto = function("ptsname_r", as: NameInto.self),
                    grant(controller) == 0, unlock(controller) == 0
                else { return nil }
                var buffer = [CChar](repeating: 0, count: 128)
                guard nameInto(controller, &buffer, buffer.count) == 0 else { return nil }
                return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
        #endif

        /// Sets the window size, as a terminal emulator does when its window is resized.
        func resize(columns: UInt16) {
            var size = winsize(ws_row: 24, ws_col: columns, ws_xpixel: 0, ws_ypixel: 0)
            _ = ioctl(controller, UInt(TIOCSWINSZ), &size)
        }

        /// What was written to the terminal side so far.
        func written() -> String {
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(controller, &buffer, buffer.count)
                guard count > 0 else { break }
                bytes += buffer[0..<count]
            }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    static let styles: [([String: String], Bool, Bool)] = [
        (["TERM": "xterm-256color"], true, true),
        ([:], true, true),
        (["TERM": "xterm", "NO_COLOR": "1"], true, false),
        (["TERM": "xterm", "NO_COLOR": ""], true, false),
        (["TERM": "dumb"], false, false),
        (["TERM": "dumb", "NO_COLOR": "1"], false, false),
    ]

    @Test(
        "on a terminal: escapes unless TERM=dumb; colour unless NO_COLOR is set (even empty) or TERM=dumb",
        arguments: styles)
    func style(environment: [String: String], escapes: Bool, colour: Bool) throws {
        let pty = try PseudoTerminal()
        let terminal = Terminal(environment: environment, descriptor: pty.terminal)
        #expect(terminal.isTerminal)
        #expect(terminal.usesEscapes == escapes, "\(environment)")
        #expect(terminal.colour == colour, "\(environment)")
    }

    @Test("not a terminal (a pipe): no escapes, no colour, whatever the environment; plain lines")
    func pipe() throws {
        var ends: [Int32] = [0, 0]
        try #require(systemPipe(&ends) == 0)
        defer {
            close(ends[0])
            close(ends[1])
        }
        let terminal = Terminal(environment: ["TERM": "xterm-256color"], descriptor: ends[1])
        #expect(!terminal.isTerminal && !terminal.usesEscapes && !terminal.colour)
        terminal.printLine("hello")
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(ends[0], &buffer, buffer.count)
        #expect(String(decoding: buffer[0..<max(count, 0)], as: UTF8.self) == "hello\n")
    }

    @Test("the width is read from the terminal, again after a resize (what SIGWINCH triggers); the line is cut to it")
    func width() throws {
        let pty = try PseudoTerminal()
        pty.resize(columns: 50)
        let terminal = Terminal(environment: ["TERM": "xterm"], descriptor: pty.terminal)
        #expect(terminal.columns == 50)
        let line = String(repeating: "x", count: 120)
        terminal.redraw(line)
        #expect(pty.written() == "\u{1B}[?25l\r\u{1B}[2K" + String(repeating: "x", count: 49))

        pty.resize(columns: 30)
        #expect(terminal.columns == 50)  // until told
        terminal.refreshWidth()
        #expect(terminal.columns == 30)
        terminal.redraw(line)
        #expect(pty.written() == "\r\u{1B}[2K" + String(repeating: "x", count: 29))
        terminal.finishLine()
        #expect(pty.written().hasSuffix("\u{1B}[?25h"))  // the cursor is shown again
    }

    @Test("COLUMNS (a positive number) is the width when the terminal reports none (0 columns), and only then")
    func columnsFallback() throws {
        let pty = try PseudoTerminal()
        pty.resize(columns: 0)
        let terminal = Terminal(environment: ["TERM": "xterm", "COLUMNS": "42"], descriptor: pty.terminal)
        #expect(terminal.columns == 42)
        pty.resize(columns: 70)
        terminal.refreshWidth()
        #expect(terminal.columns == 70, "the terminal's own width wins")
        pty.resize(columns: 0)
        let ignored = Terminal(environment: ["TERM": "xterm", "COLUMNS": "-5"], descriptor: pty.terminal)
        #expect(ignored.columns == 80, "not a positive number: the default")
    }
}

/// `pipe(2)`, named apart from the test that uses it.
private func systemPipe(_ ends: inout [Int32]) -> Int32 {
    pipe(&ends)
}
