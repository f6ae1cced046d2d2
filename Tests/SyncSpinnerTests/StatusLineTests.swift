import Foundation
import SyncEngine
import Testing

@testable import SyncSpinnerKit

@Suite("Status line")
struct StatusLineTests {
    let upload = SyncProgress(transferredBytes: 6_100_000, transferrableBytes: 8_000_000, progressEstimate: 0.76)

    /// Mid-sync: every field.
    var midSync: StatusSnapshot {
        StatusSnapshot(
            upload: upload,
            initialDownload: SyncProgress(transferredBytes: 4, transferrableBytes: 10, progressEstimate: 0.4),
            totalBytes: 8_000_000, syncedBytes: 3_200_000, writer: .connected, reader: .connecting,
            rate: TransferRate(bytesPerSecond: 1_600_000, estimatedTimeRemaining: .milliseconds(2_500)),
            pending: PendingWork(uploadChangesets: 12, uploadBytes: 1_200_000, downloadBytes: nil),
            lastSyncedAt: Date(timeIntervalSince1970: 100), now: Date(timeIntervalSince1970: 104.5), frame: 2)
    }

    /// While `--offline-for` runs: the writer suspended with everything pending, never synced.
    var offline: StatusSnapshot {
        StatusSnapshot(
            totalBytes: 4_000_000, writer: .disconnected, reader: .connected,
            rate: TransferRate(bytesPerSecond: 0, estimatedTimeRemaining: nil),
            pending: PendingWork(uploadChangesets: 40, uploadBytes: 4_000_000, downloadBytes: nil),
            offlineReason: .suspended)
    }

    @Test("every field: bytes, percent, rate and ETA (from the operator), connections, pending, upload, last sync, bar")
    func rendersEverything() {
        #expect(
            StatusLine(colour: false).render(midSync)
                == "⠹ 3.2/8.0 MB 40% 1.6 MB/s ETA 0:03 │ writer connected │ reader connecting │ 12 pending (1.2 MB) │ ↑ 6.1 MB │ synced 4 s ago │ [####------]"
        )
        #expect(
            StatusLine(colour: false).render(offline)
                == "⠋ 0.0/4.0 MB 0% 0.0 MB/s │ writer suspended │ reader connected │ 40 pending (4.0 MB) │ ↑ 0.0 MB │ never synced"
        )
    }

    @Test(
        "mid-sync at 40, 60, 80, 120 columns: least important fields dropped whole (bar, upload, last sync, pending, reader, ETA, rate)",
        arguments: [
            (
                120,
                "⠹ 3.2/8.0 MB 40% 1.6 MB/s ETA 0:03 │ writer connected │ reader connecting │ 12 pending (1.2 MB) │ synced 4 s ago"
            ),
            (80, "⠹ 3.2/8.0 MB 40% 1.6 MB/s ETA 0:03 │ writer connected │ reader connecting"),
            (60, "⠹ 3.2/8.0 MB 40% 1.6 MB/s ETA 0:03 │ writer connected"),
            (40, "⠹ 3.2/8.0 MB 40% │ writer connected"),
        ])
    func midSyncFitsTheWidth(width: Int, expected: String) {
        #expect(StatusLine(colour: false).render(midSync, width: width) == expected)
        #expect(StatusLine.visibleWidth(StatusLine(colour: true).render(midSync, width: width)) <= width)
    }

    @Test(
        "offline at 40, 60, 80, 120 columns: the writer's offline reason outlives the rate, reader, pending, last sync",
        arguments: [
            (
                120,
                "⠋ 0.0/4.0 MB 0% 0.0 MB/s │ writer suspended │ reader connected │ 40 pending (4.0 MB) │ ↑ 0.0 MB │ never synced"
            ),
            (80, "⠋ 0.0/4.0 MB 0% 0.0 MB/s │ writer suspended │ reader connected"),
            (60, "⠋ 0.0/4.0 MB 0% 0.0 MB/s │ writer suspended"),
            (40, "⠋ 0.0/4.0 MB 0% │ writer suspended"),
        ])
    func offlineFitsTheWidth(width: Int, expected: String) {
        #expect(StatusLine(colour: false).render(offline, width: width) == expected)
    }

    @Test("at every width no word is cut: each segment is a whole field (the old line ended in `reader connec` at 60)")
    func neverCutsAWord() {
        let line = StatusLine(colour: false)
        for snapshot in [midSync, offline] {
            let texts = Set(line.fields(snapshot).map(\.text))
            for width in 16...160 {
                let rendered = line.render(snapshot, width: width)
                #expect(StatusLine.visibleWidth(rendered) <= width, "\(width): \(rendered)")
                for segment in rendered.components(separatedBy: StatusLine.separator).dropFirst() {
                    #expect(texts.contains(segment), "width \(width): \(segment) is not a whole field")
                }
            }
        }
    }

    @Test("layout: drops the highest priority number first, the rightmost among equals, never priority 0")
    func layoutOrder() {
        let fields = [
            StatusLine.Field("aaaa", priority: 0), StatusLine.Field("bb", priority: 1, attached: true),
            StatusLine.Field("cc", priority: 2), StatusLine.Field("dd", priority: 2),
        ]
        #expect(StatusLine.layout(fields, width: 100) == "aaaa bb │ cc │ dd")
        #expect(StatusLine.layout(fields, width: 15) == "aaaa bb │ cc")
        #expect(StatusLine.layout(fields, width: 10) == "aaaa bb")
        #expect(StatusLine.layout(fields, width: 6) == "aaaa")
        #expect(StatusLine.layout(fields, width: 2) == "aa", "priority 0 alone too wide: clipped, the last resort")
    }

    @Test("spinner frames advance while work is outstanding; a check mark once everything is synced")
    func framesAndCheck() {
        var snapshot = StatusSnapshot(totalBytes: 10, syncedBytes: 5)
        let line = StatusLine(colour: false)
        let frames = (0..<12).map { frame -> Character in
            snapshot.frame = frame
            return line.render(snapshot).first!
        }
        #expect(Array(frames[0..<10]) == StatusLine.frames)
        #expect(frames[10] == StatusLine.frames[0])
        snapshot.syncedBytes = 10
        #expect(line.render(snapshot).hasPrefix("✓ "))
        #expect(!line.render(snapshot).contains("ETA"))
    }

    @Test("formatting: megabytes round down, percent rounds down, ETA rounds up, unknown rate shows a dash")
    func formatting() {
        #expect(StatusLine.megabytes(0) == "0.0")
        #expect(StatusLine.megabytes(99_999) == "0.0")
        #expect(StatusLine.megabytes(8_000_000) == "8.0")
        #expect(StatusLine.megabytes(1_234_567_890) == "1234.5")
        #expect(StatusLine.percent(0.999) == "99%")
        #expect(StatusLine.percent(1) == "100%")
        #expect(StatusLine.percent(.nan) == "0%")
        #expect(StatusLine.duration(0.2) == "0:01")
        #expect(StatusLine.duration(65) == "1:05")
        #expect(StatusLine.duration(.infinity) == "–")
        #expect(StatusLine.rate(12_500_000) == "12.5 MB/s")
        #expect(StatusLine.bar(0) == "[----------]")
        #expect(StatusLine.bar(1) == "[##########]")
        #expect(StatusLine(colour: false).render(StatusSnapshot(totalBytes: 1)).contains("– MB/s"))
    }

    @Test("once everything is synced the rate is left out: no `0.0 MB/s` beside 100%")
    func noRateOnceSynced() {
        let synced = StatusSnapshot(
            totalBytes: 4_000_000, syncedBytes: 4_000_000, writer: .connected, reader: .connected,
            rate: TransferRate(bytesPerSecond: 0, estimatedTimeRemaining: nil))
        let line = StatusLine(colour: false).render(synced)
        #expect(line.hasPrefix("✓ 4.0/4.0 MB 100% │ writer connected"), "\(line)")
        #expect(!line.contains("MB/s"), "\(line)")
    }

    @Test("pending bytes in the unit that fits: a small write is `1 pending (512 B)`, not `(0.0 MB)`")
    func pendingBytesInAFittingUnit() {
        var snapshot = offline
        snapshot.pending = PendingWork(uploadChangesets: 1, uploadBytes: 512, downloadBytes: nil)
        #expect(StatusLine(colour: false).render(snapshot).contains("│ 1 pending (512 B) │"))
        snapshot.pending = PendingWork(uploadChangesets: 3, uploadBytes: 45_000, downloadBytes: nil)
        #expect(StatusLine(colour: false).render(snapshot).contains("│ 3 pending (45.0 KB) │"))
    }

    @Test("colour only when asked: the plain line has no escape byte")
    func colour() {
        let snapshot = StatusSnapshot(totalBytes: 1, syncedBytes: 1, writer: .connected, reader: .disconnected)
        let coloured = StatusLine(colour: true).render(snapshot)
        #expect(coloured.contains("\u{1B}[32mconnected\u{1B}[0m"))
        #expect(coloured.contains("\u{1B}[31mdisconnected\u{1B}[0m"))
        #expect(!StatusLine(colour: false).render(snapshot).contains("\u{1B}"))
        #expect(StatusLine.visibleWidth(coloured) == StatusLine(colour: false).render(snapshot).count)
    }

    @Test("clipping counts visible characters only, never cuts an escape sequence, and closes a colour it cut")
    func clipping() {
        #expect(StatusLine.clipped("abcdef", to: 3) == "abc")
        #expect(StatusLine.clipped("abc", to: 10) == "abc")
        #expect(StatusLine.clipped("abc", to: 0) == "")
        let coloured = "a \u{1B}[32mgreen\u{1B}[0m b"
        #expect(StatusLine.clipped(coloured, to: 4) == "a \u{1B}[32mgr\u{1B}[0m")
        #expect(StatusLine.clipped(coloured, to: 9) == coloured)
        #expect(StatusLine.visibleWidth(StatusLine.clipped(coloured, to: 4)) == 4)
        // Multi-byte characters count as one column each.
        #expect(StatusLine.clipped("⠹ ↑ ↓ ✓", to: 3) == "⠹ ↑")
        for width in 0..<40 {
            let line = StatusLine(colour: true).render(
                StatusSnapshot(totalBytes: 10, syncedBytes: 3, writer: .connecting))
            #expect(StatusLine.visibleWidth(StatusLine.clipped(line, to: width)) <= width)
        }
    }

    @Test("the summary names changesets, bytes, seconds and MB/s")
    func summary() {
        #expect(
            StatusLine.summary(changesets: 200, bytes: 8_000_000, seconds: 2, checksum: "abc")
                == "synced 200 changesets, 8.0 MB in 2.00 s (4.0 MB/s); the reader holds exactly what the writer wrote (checksum abc)"
        )
    }
}
