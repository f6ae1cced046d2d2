/// The arguments of a command line not yet read, in order, with readers for option values that check
/// them and throw a `UsageError` naming the option.
///
/// A program's parse loop takes each argument with `next()`; an option that has a value then reads it
/// with `value(for:)` (or one of the checked readers), which takes the following argument:
///
/// ```swift
/// var cursor = ArgumentCursor(["--port", "0", "--data", "/srv/sync"])
/// cursor.next()                  // "--port"
/// try cursor.port(for: "--port") // 0
/// ```
public struct ArgumentCursor {
    private var remaining: ArraySlice<String>

    /// A cursor at the first of `arguments` (the program's name not among them).
    public init(_ arguments: [String]) {
        remaining = arguments[...]
    }

    /// The next argument, taken; `nil` when none is left.
    public mutating func next() -> String? {
        remaining.popFirst()
    }

    /// The value of `option`: the next argument, taken. Throws `<option> needs a value` when there is none
    /// or the next argument is itself an option (starts with `--`).
    public mutating func value(for option: String) throws(UsageError) -> String {
        guard let value = remaining.popFirst(), !value.hasPrefix("--") else {
            throw UsageError("\(option) needs a value")
        }
        return value
    }

    /// The value of `option` as a TCP port, 0…65535 (0: the system picks one). Throws
    /// `<option> must be 0…65535, not <value>` otherwise.
    public mutating func port(for option: String) throws(UsageError) -> Int {
        let text = try value(for: option)
        guard let port = Int(text), (0...65535).contains(port) else {
            throw UsageError("\(option) must be 0…65535, not \(text)")
        }
        return port
    }

    /// The value of `option` as a whole number within `range`. Throws
    /// `<option> must be a whole number in <low>…<high>, not <value>` otherwise.
    public mutating func integer(for option: String, in range: ClosedRange<Int>) throws(UsageError) -> Int {
        let text = try value(for: option)
        guard let value = Int(text), range.contains(value) else {
            throw UsageError("\(option) must be a whole number in \(range.lowerBound)…\(range.upperBound), not \(text)")
        }
        return value
    }

    /// The value of `option` as a duration (see `parseDuration`) within `range`, whole seconds at both ends.
    /// Throws `<option> must be a duration in <low>s…<high>s (a whole number with s, m, h or d), not <value>`
    /// otherwise.
    public mutating func duration(for option: String, in range: ClosedRange<Duration>) throws(UsageError) -> Duration {
        let text = try value(for: option)
        guard let value = parseDuration(text), range.contains(value) else {
            throw UsageError(
                "\(option) must be a duration in \(range.lowerBound.components.seconds)s…"
                    + "\(range.upperBound.components.seconds)s (a whole number with s, m, h or d), not \(text)")
        }
        return value
    }
}
