import SyncEngine

/// Renders a `StatusSnapshot` as one line: a pure value type, unit-tested without a terminal.
///
/// ```
/// ⠹ 3.2/8.0 MB 40% 12.5 MB/s ETA 0:01 │ writer connected │ reader connecting │ ↑ 6.1 MB │ [####------]
/// ```
///
/// - Most important first, so a narrow terminal cuts the least important end: the spinner, what the reader
///   holds of the workload, percent, rate and time left, each app's connection state, what the writer has
///   uploaded, and the reader's initial download (`.forCurrentlyOutstandingWork`) as a bar.
/// - The spinner frame shows while work is outstanding, `✓` once the reader holds everything.
/// - With `colour`, connection states are green (connected), yellow (connecting) or red (disconnected),
///   and the check mark is green; without it the line has no escape byte.
/// - `clipped(_:to:)` cuts a line to a terminal's width counting only visible characters, never inside an
///   escape sequence, so a redrawn line never wraps.
public struct StatusLine: Sendable {
    /// Braille spinner frames.
    public static let frames: [Character] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]
    /// The width of the initial-download bar, between its brackets.
    public static let barWidth = 10

    public var colour: Bool

    public init(colour: Bool) { self.colour = colour }

    public func render(_ snapshot: StatusSnapshot) -> String {
        var head =
            snapshot.isOutstanding
            ? String(Self.frames[snapshot.frame % Self.frames.count]) : paint("✓", .green)
        head += " \(Self.bytes(snapshot.syncedBytes, of: snapshot.totalBytes)) \(Self.percent(snapshot.fraction)) "
        head += snapshot.bytesPerSecond.map { Self.rate($0) } ?? "– MB/s"
        if snapshot.isOutstanding, let rate = snapshot.bytesPerSecond, rate > 0 {
            head += " ETA \(Self.duration(Double(snapshot.totalBytes - snapshot.syncedBytes) / rate))"
        }
        var parts = [head, "writer " + state(snapshot.writer), "reader " + state(snapshot.reader)]
        parts.append("↑ \(Self.megabytes(snapshot.upload?.transferredBytes ?? 0)) MB")
        if let initial = snapshot.initialDownload {
            parts.append(Self.bar(initial.isTransferComplete ? 1 : initial.fractionTransferred))
        }
        return parts.joined(separator: " │ ")
    }

    /// The summary line at the end of a successful run.
    public static func summary(changesets: Int, bytes: Int, seconds: Double, checksum: String) -> String {
        "synced \(changesets) changesets, \(megabytes(bytes)) MB in \(String(format: "%.2f", seconds)) s "
            + "(\(megabytes(Int(Double(bytes) / max(seconds, 0.001)))) MB/s); "
            + "the reader holds exactly what the writer wrote (checksum \(checksum))"
    }

    // MARK: Pieces

    /// `"3.2/8.0 MB"`.
    public static func bytes(_ done: Int, of total: Int) -> String { "\(megabytes(done))/\(megabytes(total)) MB" }

    /// Bytes as decimal megabytes with one decimal: `8000000` → `"8.0"`.
    public static func megabytes(_ bytes: Int) -> String {
        let tenths = (Double(max(0, bytes)) / 100_000).rounded(.down)
        let whole = Int(tenths) / 10
        return "\(whole).\(Int(tenths) % 10)"
    }

    /// `"40%"`: whole percent, rounded down, so 100% means everything.
    public static func percent(_ fraction: Double) -> String {
        "\(Int((min(1, max(0, fraction)) * 100).rounded(.down)))%"
    }

    /// `"12.5 MB/s"`.
    public static func rate(_ bytesPerSecond: Double) -> String {
        "\(String(format: "%.1f", max(0, bytesPerSecond) / 1_000_000)) MB/s"
    }

    /// `"1:05"` (minutes:seconds, rounded up), `"–"` when unknown or absurd.
    public static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0, seconds < 360_000 else { return "–" }
        let whole = Int(seconds.rounded(.up))
        let secondsPart = whole % 60
        return "\(whole / 60):\(secondsPart < 10 ? "0" : "")\(secondsPart)"
    }

    /// `"[####------]"`.
    public static func bar(_ fraction: Double) -> String {
        let filled = Int((min(1, max(0, fraction)) * Double(barWidth)).rounded(.down))
        return "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: barWidth - filled) + "]"
    }

    private func state(_ state: ConnectionState) -> String {
        switch state {
        case .connected: paint("connected", .green)
        case .connecting: paint("connecting", .yellow)
        case .disconnected: paint("disconnected", .red)
        }
    }

    // MARK: Colour and width

    enum Colour: String {
        case green = "32"
        case yellow = "33"
        case red = "31"
    }

    private func paint(_ text: String, _ colour: Colour) -> String {
        self.colour ? "\u{1B}[\(colour.rawValue)m\(text)\u{1B}[0m" : text
    }

    /// `line` cut to `width` visible characters (escape sequences take no width and are never cut; a
    /// colour left open is closed). A width below 1 gives an empty line.
    public static func clipped(_ line: String, to width: Int) -> String {
        guard width > 0 else { return "" }
        var result = ""
        var visible = 0
        var inEscape = false
        var openColour = false
        for character in line {
            if inEscape {
                result.append(character)
                if character.isLetter {
                    inEscape = false
                }
                continue
            }
            if character == "\u{1B}" {
                inEscape = true
                result.append(character)
                continue
            }
            guard visible < width else { break }
            result.append(character)
            visible += 1
        }
        // A colour opened and not reset before the cut is reset.
        if let lastOpen = result.range(of: "\u{1B}[3", options: .backwards) {
            openColour =
                result.range(of: "\u{1B}[0m", options: .backwards).map { $0.lowerBound < lastOpen.lowerBound } ?? true
        }
        return openColour ? result + "\u{1B}[0m" : result
    }

    /// The visible width of `line`: its characters outside escape sequences.
    public static func visibleWidth(_ line: String) -> Int {
        var count = 0
        var inEscape = false
        for character in line {
            if inEscape {
                if character.isLetter { inEscape = false }
            } else if character == "\u{1B}" {
                inEscape = true
            } else {
                count += 1
            }
        }
        return count
    }
}
