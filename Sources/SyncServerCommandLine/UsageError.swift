/// A command line the program cannot run with: a missing, malformed or out-of-range value, an unknown
/// argument, a missing required option.
///
/// `description` is the message alone (e.g. `--port must be 0…65535, not 70000`); the programs print it
/// after their name, followed by their usage, and exit 64.
public struct UsageError: Error, CustomStringConvertible, Equatable {
    /// What is wrong, naming the option and the value given.
    public let message: String

    /// An error saying `message`.
    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
