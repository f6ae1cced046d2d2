/// Reads the fields of a wire message written by `ByteWriter`, front to back.
///
/// Every read checks that the bytes it needs are present and throws `WireError.truncated` otherwise, so
/// a reader never traps and never allocates more than the input could hold, whatever the input says.
public struct ByteReader: Sendable {
    private let bytes: [UInt8]
    private var offset: Int

    /// A reader positioned at the first byte of `bytes`.
    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        offset = 0
    }

    /// Whether every byte has been read.
    public var isAtEnd: Bool { offset == bytes.count }

    /// How many bytes are left to read.
    public var remainingCount: Int { bytes.count - offset }

    /// Reads one byte. Throws `.truncated(needed: 1, available: 0)` at the end.
    public mutating func readUInt8() throws(WireError) -> UInt8 {
        guard offset < bytes.count else { throw .truncated(needed: 1, available: 0) }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// Reads 2 bytes as a little-endian `UInt16`. Throws `.truncated` if fewer remain (consuming nothing).
    public mutating func readUInt16() throws(WireError) -> UInt16 {
        try readInteger()
    }

    /// Reads 4 bytes as a little-endian `UInt32`. Throws `.truncated` if fewer remain (consuming nothing).
    public mutating func readUInt32() throws(WireError) -> UInt32 {
        try readInteger()
    }

    /// Reads 8 bytes as a little-endian `UInt64`. Throws `.truncated` if fewer remain (consuming nothing).
    public mutating func readUInt64() throws(WireError) -> UInt64 {
        try readInteger()
    }

    /// Reads a `UInt32` length prefix, then that many bytes.
    ///
    /// Throws `.lengthTooLarge(length, limit: maximumLength)` if the length exceeds `maximumLength`, then
    /// `.truncated(needed: length, available: remaining)` if fewer bytes remain; both before allocating.
    /// The length prefix stays consumed when it throws.
    public mutating func readBytes(maximumLength: Int = .max) throws(WireError) -> [UInt8] {
        let range = try readLengthPrefixedRange(maximumLength: maximumLength)
        return Array(bytes[range])
    }

    /// Reads a `UInt32` length prefix, then that many bytes as UTF-8.
    ///
    /// Throws like `readBytes(maximumLength:)`, and `.invalidUTF8` if the bytes are not valid UTF-8
    /// (overlong forms, surrogates and truncated sequences included). Valid input is kept exactly: no
    /// normalization, so re-encoding gives the same bytes.
    public mutating func readString(maximumLength: Int = .max) throws(WireError) -> String {
        let range = try readLengthPrefixedRange(maximumLength: maximumLength)
        guard let string = String(validating: bytes[range], as: UTF8.self) else { throw .invalidUTF8 }
        return string
    }

    /// Reads a `UInt32` element count for an array whose every element takes at least
    /// `minimumElementSize` bytes.
    ///
    /// Throws `.truncated(needed: count × minimumElementSize, available: remaining)` when the elements
    /// could not fit in what remains, so a caller may reserve `count` elements without risk.
    public mutating func readCount(minimumElementSize: Int) throws(WireError) -> Int {
        let raw = try readUInt32()
        // On a 32-bit platform a count above `Int.max` cannot fit in memory anyway: report it as truncated.
        guard let count = Int(exactly: raw) else { throw .truncated(needed: .max, available: remainingCount) }
        let needed = count.multipliedReportingOverflow(by: max(1, minimumElementSize))
        guard !needed.overflow, needed.partialValue <= remainingCount else {
            throw .truncated(needed: needed.overflow ? .max : needed.partialValue, available: remainingCount)
        }
        return count
    }

    /// Throws `.trailingBytes(remainingCount)` unless every byte has been read.
    public func expectEnd() throws(WireError) {
        guard isAtEnd else { throw .trailingBytes(remainingCount) }
    }

    /// Reads a length prefix and returns the range of the bytes it announces, consuming them.
    private mutating func readLengthPrefixedRange(maximumLength: Int) throws(WireError) -> Range<Int> {
        let raw = try readUInt32()
        // On a 32-bit platform a length above `Int.max` is larger than any limit.
        guard let length = Int(exactly: raw) else { throw .lengthTooLarge(.max, limit: maximumLength) }
        guard length <= maximumLength else { throw .lengthTooLarge(length, limit: maximumLength) }
        guard length <= remainingCount else { throw .truncated(needed: length, available: remainingCount) }
        defer { offset += length }
        return offset..<(offset + length)
    }

    /// Reads `T`'s width in bytes as a little-endian integer.
    @inline(__always)
    private mutating func readInteger<T: FixedWidthInteger>() throws(WireError) -> T {
        let size = MemoryLayout<T>.size
        guard remainingCount >= size else { throw .truncated(needed: size, available: remainingCount) }
        let value = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: T.self) }
        offset += size
        return T(littleEndian: value)
    }
}
