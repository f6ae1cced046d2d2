// libFuzzer target: the API keys file parser. Any UTF-8 text parses to keys or a typed error; no key or
// pattern is empty or contains a separator.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAPIKeys(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    guard let text = String(validating: bytes, as: UTF8.self) else { return 0 }
    guard let keys = try? APIKeysFile.parse(text) else { return 0 }
    for (key, patterns) in keys {
        for field in [key] + Array(patterns) {
            precondition(!field.isEmpty)
            precondition(!field.unicodeScalars.contains { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "#" })
        }
        precondition(!patterns.isEmpty)
    }
    return 0
}
