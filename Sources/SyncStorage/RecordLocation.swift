/// Where a record is in a `RecordLog`'s file: enough to read it back without scanning.
public struct RecordLocation: Sendable, Hashable, Comparable {
    /// The offset of the record's header in the file.
    public var offset: UInt64
    /// The length of its payload.
    public var length: UInt32

    public init(offset: UInt64, length: UInt32) {
        self.offset = offset
        self.length = length
    }

    /// Where the next record starts.
    public var end: UInt64 { offset + UInt64(RecordFormat.recordHeaderSize) + UInt64(length) }

    public static func < (lhs: RecordLocation, rhs: RecordLocation) -> Bool { lhs.offset < rhs.offset }
}
