import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Resident set size of process `pid` (or this one) in bytes, from /proc (Linux).
func residentBytes(pid: Int32? = nil) -> Int {
    let path = "/proc/\(pid.map(String.init) ?? "self")/status"
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return 0 }
    for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        let digits = line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return digits * 1024
    }
    return 0
}

/// The `q` quantile of `values` (sorted copy), in milliseconds.
func quantile(_ values: [Duration], _ q: Double) -> Double {
    let sorted = values.sorted()
    let index = min(sorted.count - 1, Int((Double(sorted.count - 1) * q).rounded()))
    return milliseconds(sorted[index])
}

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}

func format(_ value: Double) -> String { String(format: "%.2f", value) }

/// Raises the soft limit on open files to the hard limit (P11 needs a descriptor per connection).
func raiseOpenFileLimit() {
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = limit.rlim_max
    setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
}

/// A value behind a lock (the package's own `Locked` is not public).
final class Locked<Value>: @unchecked Sendable {
    // @unchecked Sendable: every access goes through `lock`.
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

/// Writes a line to standard output at once (the parent process reads it through a pipe).
func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
