import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The spinner's output (standard output unless told otherwise): whether it is a terminal, whether to
/// colour, how wide it is.
///
/// - A terminal (`isatty`): the status line is redrawn in place (`\r`, erase line), the cursor hidden while
///   drawing; colour unless `NO_COLOR` is set (to anything) or `TERM` is `dumb`; with `TERM=dumb` no escape
///   sequence at all (the line is redrawn with `\r` and padded with spaces).
/// - Not a terminal: plain lines, no escape byte ever.
/// - The width comes from `ioctl(TIOCGWINSZ)` (or `COLUMNS` when the terminal reports none), read again
///   on `SIGWINCH`.
///
/// Not thread-safe: the spinner uses it from its UI queue only.
public final class Terminal {
    /// Whether the output is a terminal (`isatty`).
    public let isTerminal: Bool
    /// Whether escape sequences are written: on a terminal whose `TERM` is not `dumb`.
    public let usesEscapes: Bool
    /// Whether the line is coloured: escape sequences are written and `NO_COLOR` is not set (to anything,
    /// even the empty string).
    public let colour: Bool
    /// The terminal's width in columns (80 until read; not read when the output is not a terminal).
    public private(set) var columns: Int
    /// The descriptor written to.
    public let descriptor: Int32
    /// `COLUMNS` from the environment, when a positive number.
    private let columnsFromEnvironment: Int?
    private var cursorHidden = false
    private var lastLineWidth = 0

    /// The terminal on `descriptor` (default: standard output), styled for `environment`.
    public init(
        environment: [String: String] = ProcessInfo.processInfo.environment, descriptor: Int32 = STDOUT_FILENO
    ) {
        self.descriptor = descriptor
        isTerminal = isatty(descriptor) == 1
        let dumb = environment["TERM"] == "dumb"
        usesEscapes = isTerminal && !dumb
        colour = usesEscapes && environment["NO_COLOR"] == nil
        columns = 80
        columnsFromEnvironment = environment["COLUMNS"].flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil }
        refreshWidth()
    }

    /// Reads the terminal's width again (after `SIGWINCH`): `ioctl(TIOCGWINSZ)`, or `COLUMNS` from the
    /// environment (a positive number) when the terminal does not report a width (some pseudo-terminals
    /// report 0 columns).
    public func refreshWidth() {
        guard isTerminal else { return }
        var size = winsize()
        if ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 {
            columns = Int(size.ws_col)
        } else if let fallback = columnsFromEnvironment {
            columns = fallback
        }
    }

    /// Redraws the status line in place, cut to the width (one column short, so the cursor never wraps).
    public func redraw(_ line: String) {
        let clipped = StatusLine.clipped(line, to: columns - 1)
        if usesEscapes {
            if !cursorHidden {
                write("\u{1B}[?25l")
                cursorHidden = true
            }
            write("\r\u{1B}[2K" + clipped)
        } else {
            let width = StatusLine.visibleWidth(clipped)
            write("\r" + clipped + String(repeating: " ", count: max(0, lastLineWidth - width)))
            lastLineWidth = width
        }
    }

    /// Ends the redrawn line (a newline) and shows the cursor again.
    public func finishLine() {
        guard isTerminal else { return }
        write("\n")
        lastLineWidth = 0
        showCursor()
    }

    /// Shows the cursor if it was hidden.
    public func showCursor() {
        guard cursorHidden else { return }
        write("\u{1B}[?25h")
        cursorHidden = false
    }

    /// Prints a line (plain mode, or above the status line).
    public func printLine(_ line: String) {
        if isTerminal && lastLineWidth > 0 || isTerminal && usesEscapes {
            write((usesEscapes ? "\r\u{1B}[2K" : "\r") + line + "\n")
            lastLineWidth = 0
        } else {
            write(line + "\n")
        }
    }

    /// Writes `text` to the output at once (unbuffered).
    public func write(_ text: String) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { systemWrite(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
    }
}

/// `write(2)`, named apart from `Terminal.write(_:)`.
private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    #if canImport(Glibc)
        Glibc.write(descriptor, buffer, count)
    #elseif canImport(Darwin)
        Darwin.write(descriptor, buffer, count)
    #endif
}
