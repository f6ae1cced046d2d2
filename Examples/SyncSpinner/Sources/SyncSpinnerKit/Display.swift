import Dispatch
import Foundation
import SyncEngine

/// What the spinner shows, kept and drawn on one serial queue (`queue`): the latest progress, connection
/// states, download rate (from `rate(window:on:)`) and the writer's status, and the output policy — a line redrawn ten times a
/// second on a terminal, plain lines at most every half second otherwise, and a line for each connection
/// state change in plain mode.
final class Display: @unchecked Sendable {
    // @unchecked Sendable: every stored property is touched only on `queue` (each method is called there:
    // the streams deliver on it and the timer fires on it), or is immutable.
    let queue: DispatchQueue
    private let terminal: Terminal
    private let line: StatusLine
    private let startedAt = ContinuousClock.now
    private var snapshot: StatusSnapshot
    private var lastPlainLine: ContinuousClock.Instant?
    private var timer: (any DispatchSourceTimer)?
    private var isFinished = false

    init(queue: DispatchQueue, terminal: Terminal, totalBytes: Int) {
        self.queue = queue
        self.terminal = terminal
        line = StatusLine(colour: terminal.colour)
        snapshot = StatusSnapshot(totalBytes: totalBytes)
    }

    /// Starts the redraw timer (terminal only).
    func startRedrawing() {
        guard terminal.isTerminal else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now(), repeating: .milliseconds(100))
        timer.setEventHandler { [weak self] in
            guard let self, !self.isFinished else { return }
            self.snapshot.frame += 1
            self.draw()
        }
        timer.resume()
        self.timer = timer
    }

    func note(_ text: String) {
        guard !isFinished else { return }
        terminal.printLine(text)
    }

    /// New progress from the pipeline (throttled, on `queue`).
    func update(upload: SyncProgress, download: SyncProgress) {
        guard !isFinished else { return }
        snapshot.upload = upload
        snapshot.download = download
        snapshot.syncedBytes = min(download.transferredBytes, snapshot.totalBytes)
        let now = ContinuousClock.now
        if terminal.isTerminal {
            draw()
        } else if lastPlainLine.map({ now - $0 >= .milliseconds(500) }) ?? true {
            lastPlainLine = now
            terminal.printLine(plain())
        }
    }

    /// The reader's download rate and time remaining; shown at the next redraw.
    func update(rate: TransferRate) {
        snapshot.rate = rate
    }

    /// The writer's status: its pending work, why it is offline, when it last synced; shown at the next
    /// redraw (or plain line).
    func update(writerStatus status: SyncStatus) {
        snapshot.pending = status.pending
        snapshot.offlineReason = status.offlineReason
        snapshot.lastSyncedAt = status.lastSyncedAt
    }

    /// The reader's initial download (`.forCurrentlyOutstandingWork`).
    func updateInitialDownload(_ progress: SyncProgress) {
        snapshot.initialDownload = progress
    }

    /// A connection state changed: redrawn on a terminal, a line of its own otherwise.
    func update(_ app: String, _ state: ConnectionState) {
        guard !isFinished else { return }
        if app == "writer" { snapshot.writer = state } else { snapshot.reader = state }
        if terminal.isTerminal { draw() } else { terminal.printLine("\(app): \(state)") }
    }

    /// The reader holds the whole workload, `seconds` after the start: the line shows it complete, whatever
    /// the throttled stream last delivered, with the time the summary gives too.
    func complete(after seconds: Double) {
        snapshot.syncedBytes = snapshot.totalBytes
        if terminal.isTerminal { draw(elapsed: seconds) } else { terminal.printLine(plain(elapsed: seconds)) }
    }

    /// Ends the status line and restores the cursor; later updates are ignored.
    func finish() {
        guard !isFinished else { return }
        isFinished = true
        timer?.cancel()
        timer = nil
        if terminal.isTerminal {
            draw()
            terminal.finishLine()
        }
    }

    /// The bytes the reader holds so far, and of how many.
    var synced: (bytes: Int, total: Int) { (snapshot.syncedBytes, snapshot.totalBytes) }

    /// Seconds since the display was made (the start of the run): the time shown on each plain line and
    /// in the summary.
    var elapsed: Double {
        let duration = ContinuousClock.now - startedAt
        return Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    private func draw(elapsed seconds: Double? = nil) {
        snapshot.elapsedSeconds = seconds ?? elapsed
        snapshot.now = Date()
        // One column short of the width, so the cursor never wraps.
        terminal.redraw(line.render(snapshot, width: terminal.columns - 1))
    }

    private func plain(elapsed seconds: Double? = nil) -> String {
        snapshot.elapsedSeconds = seconds ?? elapsed
        snapshot.now = Date()
        return String(format: "%.2f s  ", snapshot.elapsedSeconds) + line.render(snapshot)
    }
}
