/// Builds the bytes of a wire message: fixed-width little-endian integers, and length-prefixed byte
/// strings and UTF-8 strings.
///
/// Writing never fails; it only appends to `bytes`.
public struct ByteWriter: Sendable {
    /// Everything written so far, in order.
    public private(set) var bytes: [UInt8]

    /// An empty writer.
    public init() {
        bytes = []
    }

    /// An empty writer whose buffer already has room for `capacity` bytes (so writing that many does not
    /// reallocate). A negative `capacity` is treated as 0.
    public init(capacity: Int) {
        bytes = []
        bytes.reserveCapacity(max(0, capacity))
    }

    /// Appends one byte.
    public mutating func write(_ v: UInt8) {
        bytes.append(v)
    }

    /// Appends `v` as 2 bytes, little-endian.
    public mutating func write(_ v: UInt16) {
        writeInteger(v)
    }

    /// Appends `v` as 4 bytes, little-endian.
    public mutating func write(_ v: UInt32) {
        writeInteger(v)
    }

    /// Appends `v` as 8 bytes, little-endian.
    public mutating func write(_ v: UInt64) {
        writeInteger(v)
    }

    /// Appends `b.count` as a little-endian `UInt32`, then the bytes of `b`.
    ///
    /// - Precondition: `b.count <= UInt32.max` (traps otherwise).
    public mutating func writeBytes(_ b: [UInt8]) {
        write(UInt32(b.count))
        bytes.append(contentsOf: b)
    }

    /// Appends the length of `s` in UTF-8 bytes as a little-endian `UInt32`, then those bytes.
    ///
    /// - Precondition: the UTF-8 form is at most `UInt32.max` bytes (traps otherwise).
    public mutating func writeString(_ s: String) {
        let utf8 = s.utf8
        write(UInt32(utf8.count))
        bytes.append(contentsOf: utf8)
    }

    /// Appends the little-endian bytes of `v` in one copy.
    @inline(__always)
    private mutating func writeInteger<T: FixedWidthInteger>(_ v: T) {
        withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
    }
}
