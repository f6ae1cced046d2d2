import Foundation
import SyncStorage
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The record-log recovery scan's fuzz corpus (`Fuzz/Corpus/record-log-scan`) replayed through the same
/// checks as its libFuzzer target (`Fuzz/Targets/FuzzRecordLogScan.swift`): each file is opened as a log,
/// and either refused with a typed error or recovered — every intact record reads back as the scan saw
/// it, and a torn tail is cut where the recovery says (issue 23, item 10).
@Suite(.timeLimit(.minutes(5))) struct RecordLogCorpusTests {
    @Test("every record-log corpus file opens to intact records that read back, or a typed error")
    func replay() throws {
        let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fuzz/Corpus/record-log-scan")
        let names = try FileManager.default.contentsOfDirectory(atPath: corpus.path).sorted()
        try #require(!names.isEmpty, "no corpus in \(corpus.path)")
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("corpus-\(UUID().uuidString).log").path
        defer { unlink(path) }
        var opened = 0
        for name in names {
            unlink(path)
            let input = try Data(contentsOf: corpus.appendingPathComponent(name))
            try input.write(to: URL(fileURLWithPath: path))
            // A version 2 file is converted at open (rewritten as version 3), so its cut is an offset in the
            // old layout; a version 3 file is cut in place.
            let wasVersion2 = input.starts(with: RecordFormat.magic + [2, 0])
            var visited: [(RecordLocation, [UInt8])] = []
            let log: RecordLog
            do {
                log = try RecordLog(path: path, visit: { visited.append(($0, Array($1))) })
            } catch {
                continue  // a typed RecordLogError: the file is refused, as it should be for some inputs
            }
            opened += 1
            #expect(log.recovery.recordCount == visited.count, "\(name)")
            for (location, payload) in visited { #expect(try log.read(location) == payload, "\(name)") }
            log.close()
            var status = stat()
            #expect(stat(path, &status) == 0)
            if wasVersion2 {
                let converted = try Data(contentsOf: URL(fileURLWithPath: path))
                #expect(converted.starts(with: RecordFormat.magic + [3, 0]), "\(name): not converted to version 3")
            } else if let cut = log.recovery.truncatedAt {
                #expect(UInt64(status.st_size) == cut, "\(name)")
            }
        }
        #expect(opened > 0)
    }
}
