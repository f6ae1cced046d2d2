// libFuzzer target: the record log's recovery scan. The input is written as a log file (on tmpfs when
// there is one) and opened: the scan either throws a typed error, or finds intact records, each of which
// reads back as the scan saw it, and cuts the file to the length it reports.
#if canImport(Glibc)
    import Glibc
#endif

private let fuzzPath: String = {
    let directory = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
    return "\(directory)/syncstreams-fuzz-recordlog-\(getpid()).log"
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRecordLogScan(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    unlink(fuzzPath)
    let descriptor = open(fuzzPath, O_CREAT | O_WRONLY | O_TRUNC, 0o600)
    precondition(descriptor >= 0)
    precondition(write(descriptor, start, count) == count)
    close(descriptor)
    var visited: [(RecordLocation, [UInt8])] = []
    // A version 2 file is converted at open (rewritten as version 3): its cut is an offset in the old layout.
    let wasVersion2 =
        count >= 7 && Array(UnsafeRawBufferPointer(start: start, count: 7)) == RecordFormat.magic + [2, 0]
    guard let log = try? RecordLog(path: fuzzPath, visit: { visited.append(($0, Array($1))) }) else { return 0 }
    precondition(log.recovery.recordCount == visited.count)
    for (location, payload) in visited { precondition((try? log.read(location)) == payload) }
    log.close()
    var status = stat()
    precondition(stat(fuzzPath, &status) == 0)
    if !wasVersion2, let cut = log.recovery.truncatedAt { precondition(UInt64(status.st_size) == cut) }
    return 0
}
