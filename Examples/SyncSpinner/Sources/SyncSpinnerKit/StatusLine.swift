import Foundation
import SyncEngine

/// Renders a `StatusSnapshot` as one line that fits a width: a pure value type, unit-tested without a
/// terminal.
///
/// ```
/// ⠹ 3.2/8.0 MB 40% 1.6 MB/s ETA 0:03 │ writer connected │ reader connecting │ 12 pending (1.2 MB) │ ↑ 6.1 MB │ synced 4 s ago │ [####------]
/// ```
///
/// - The fields, left to right: the spinner with what the reader holds of the workload and the percent;
///   while work is outstanding, the reader's download rate and time remaining (from `rate(window:on:)`;
///   left out once everything is synced, where it would only say `0.0 MB/s`); the writer's connection,
///   or why it is offline (`writer suspended`); the reader's connection; the writer's pending
///   changesets and bytes (`512 B`, `45.0 KB`, `1.2 MB`: the unit that fits); what the writer has uploaded; when the writer last synced; the reader's
///   initial download (`.forCurrentlyOutstandingWork`) as a bar.
/// - **Width.** `render(_:width:)` drops whole fields, least important first, until the line fits
///   (`layout(_:width:)`); a word is never cut. Importance, most first: the spinner, bytes and percent
///   (never dropped); the writer's connection or offline reason; the rate; the time remaining; the
///   reader's connection; the pending work; the last sync; what was uploaded; the bar. Only if the first
///   field alone is wider than the width is it clipped.
/// - The spinner frame shows while work is outstanding, `✓` once the reader holds everything.
/// - With `colour`, connection states are green (connected), yellow (connecting) or red (disconnected,
///   offline), and the check mark is green; without it the line has no escape byte.
public struct StatusLine: Sendable {
    /// Braille spinner frames.
    public static let frames: [Character] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]
    /// The width of the initial-download bar, between its brackets.
    public static let barWidth = 10
    /// Between fields that are not attached to the previous one.
    public static let separator = " │ "

    public var colour: Bool

    public init(colour: Bool) { self.colour = colour }

    /// One piece of the line.
    public struct Field: Sendable, Equatable {
        /// The text, maybe with colour escapes.
        public var text: String
        /// How important it is: 0 is never dropped; the highest is dropped first.
        public var priority: Int
        /// Joined to the previous field with a space (part of the same group) instead of `separator`.
        public var attached: Bool

        public init(_ text: String, priority: Int, attached: Bool = false) {
            self.text = text
            self.priority = priority
            self.attached = attached
        }
    }

    /// The whole line, every field (for plain output, where there is no width).
    public func render(_ snapshot: StatusSnapshot) -> String { Self.layout(fields(snapshot), width: .max) }

    /// The line, fitted to `width` visible columns by dropping the least important fields.
    public func render(_ snapshot: StatusSnapshot, width: Int) -> String {
        Self.layout(fields(snapshot), width: width)
    }

    /// The fields of `snapshot`, in display order, with their priorities.
    public func fields(_ snapshot: StatusSnapshot) -> [Field] {
        let spinner =
            snapshot.isOutstanding
            ? String(Self.frames[snapshot.frame % Self.frames.count]) : paint("✓", .green)
        var fields = [
            Field(
                "\(spinner) \(Self.bytes(snapshot.syncedBytes, of: snapshot.totalBytes)) "
                    + Self.percent(snapshot.fraction), priority: 0)
        ]
        // Once everything is synced the rate says nothing (it decays to 0.0 MB/s): left out.
        if snapshot.isOutstanding {
            fields.append(
                Field(snapshot.rate.map { Self.rate($0.bytesPerSecond) } ?? "– MB/s", priority: 2, attached: true))
            if let remaining = snapshot.rate?.estimatedTimeRemaining {
                fields.append(Field("ETA \(Self.duration(remaining.seconds))", priority: 3, attached: true))
            }
        }
        if let reason = snapshot.offlineReason {
            fields.append(Field("writer " + paint(Self.reason(reason), .red), priority: 1))
        } else {
            fields.append(Field("writer " + state(snapshot.writer), priority: 1))
        }
        fields.append(Field("reader " + state(snapshot.reader), priority: 4))
        if let pending = snapshot.pending {
            fields.append(
                Field(
                    "\(pending.uploadChangesets) pending (\(ByteCountFormatting.text(Double(pending.uploadBytes))))",
                    priority: 5))
        }
        fields.append(Field("↑ \(Self.megabytes(snapshot.upload?.transferredBytes ?? 0)) MB", priority: 7))
        fields.append(Field(Self.lastSynced(snapshot.lastSyncedAt, now: snapshot.now), priority: 6))
        if let initial = snapshot.initialDownload {
            fields.append(Field(Self.bar(initial.isTransferComplete ? 1 : initial.fractionTransferred), priority: 8))
        }
        return fields
    }

    /// Joins `fields` in order, dropping the least important ones (the highest priority; among equals,
    /// the rightmost) until the line is at most `width` visible columns. Fields of priority 0 are never
    /// dropped: if they alone are too wide, the line is clipped (`clipped(_:to:)`). A dropped field takes
    /// its separator with it; a field attached to a dropped one keeps its place in the group.
    public static func layout(_ fields: [Field], width: Int) -> String {
        var kept = fields
        while true {
            let line = join(kept)
            if visibleWidth(line) <= width { return line }
            guard
                let drop = kept.indices.filter({ kept[$0].priority > 0 }).max(by: {
                    (kept[$0].priority, $0) < (kept[$1].priority, $1)
                })
            else { return clipped(line, to: width) }
            kept.remove(at: drop)
        }
    }

    private static func join(_ fields: [Field]) -> String {
        var line = ""
        for (index, field) in fields.enumerated() {
            if index > 0 { line += field.attached ? " " : separator }
            line += field.text
        }
        return line
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

    /// `"synced 4 s ago"`, `"synced 2 min ago"`, `"never synced"`.
    public static func lastSynced(_ date: Date?, now: Date) -> String {
        guard let date else { return "never synced" }
        let seconds = max(0, Int(now.timeIntervalSince(date).rounded(.down)))
        return seconds < 120 ? "synced \(seconds) s ago" : "synced \(seconds / 60) min ago"
    }

    /// A short offline reason: `"suspended"`, `"waiting to reconnect"`, `"credential refused"`,
    /// `"client reset"`, `"closed"`.
    public static func reason(_ reason: OfflineReason) -> String {
        switch reason {
        case .suspended: "suspended"
        case .waitingToReconnect: "waiting to reconnect"
        case .credentialRefused: "credential refused"
        case .clientReset: "client reset"
        case .closed: "closed"
        }
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

    /// `line` cut to `width` visible characters (the last resort of `layout`) (escape sequences take no width and are never cut; a
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

extension Duration {
    /// This duration in seconds, as a `Double`.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
