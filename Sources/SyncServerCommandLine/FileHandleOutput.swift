#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes to standard output or error, unbuffered: a supervisor reading a server's URL line sees it at
/// once. Each call writes its whole text (retrying short writes) or, when a write fails (the reader is
/// gone), drops the rest; it never throws and never buffers.
public enum FileHandleOutput {
    /// Writes `text` to standard output (descriptor 1).
    public static func standardOutput(_ text: String) { write(text, to: 1) }

    /// Writes `text` to standard error (descriptor 2).
    public static func standardError(_ text: String) { write(text, to: 2) }

    private static func write(_ text: String, to descriptor: Int32) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { systemWrite(descriptor, $0.baseAddress, $0.count) }
            if count <= 0 { return }
            offset += count
        }
    }
}

private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}
