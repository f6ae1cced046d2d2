import Testing

@testable import SyncWire

@Suite struct ByteWriterReaderTests {
    @Test func fixedWidthIntegersAreLittleEndian() throws {
        var writer = ByteWriter()
        writer.write(UInt8(0x01))
        writer.write(UInt16(0x0203))
        writer.write(UInt32(0x0405_0607))
        writer.write(UInt64(0x0809_0A0B_0C0D_0E0F))
        #expect(
            writer.bytes == [0x01, 0x03, 0x02, 0x07, 0x06, 0x05, 0x04, 0x0F, 0x0E, 0x0D, 0x0C, 0x0B, 0x0A, 0x09, 0x08])

        var reader = ByteReader(writer.bytes)
        #expect(try reader.readUInt8() == 0x01)
        #expect(try reader.readUInt16() == 0x0203)
        #expect(try reader.readUInt32() == 0x0405_0607)
        #expect(try reader.readUInt64() == 0x0809_0A0B_0C0D_0E0F)
        #expect(reader.isAtEnd)
        try reader.expectEnd()
    }

    @Test func bytesAndStringsAreLengthPrefixed() throws {
        var writer = ByteWriter(capacity: 64)
        writer.writeBytes([])
        writer.writeBytes([0xFF, 0x00])
        writer.writeString("")
        writer.writeString("é")
        #expect(writer.bytes == [0, 0, 0, 0, 2, 0, 0, 0, 0xFF, 0x00, 0, 0, 0, 0, 2, 0, 0, 0, 0xC3, 0xA9])

        var reader = ByteReader(writer.bytes)
        #expect(try reader.readBytes() == [])
        #expect(try reader.readBytes() == [0xFF, 0x00])
        #expect(try reader.readString() == "")
        #expect(try reader.readString() == "é")
        #expect(reader.remainingCount == 0)
    }

    @Test func negativeCapacityIsAllowed() {
        var writer = ByteWriter(capacity: -5)
        writer.write(UInt8(1))
        #expect(writer.bytes == [1])
    }

    @Test func shortReadsThrowTruncatedAndConsumeNothing() throws {
        var reader = ByteReader([1, 2, 3])
        #expect(throws: WireError.truncated(needed: 4, available: 3)) { try reader.readUInt32() }
        #expect(throws: WireError.truncated(needed: 8, available: 3)) { try reader.readUInt64() }
        #expect(reader.remainingCount == 3)
        #expect(try reader.readUInt16() == 0x0201)
        #expect(throws: WireError.truncated(needed: 2, available: 1)) { try reader.readUInt16() }
        #expect(try reader.readUInt8() == 3)
        #expect(throws: WireError.truncated(needed: 1, available: 0)) { try reader.readUInt8() }
    }

    @Test func declaredLengthsBeyondTheInputFailBeforeAllocating() {
        var reader = ByteReader([0xFF, 0xFF, 0xFF, 0xFF, 1, 2])
        #expect(throws: WireError.truncated(needed: 0xFFFF_FFFF, available: 2)) { try reader.readBytes() }
        var stringReader = ByteReader([0xFF, 0xFF, 0xFF, 0xFF])
        #expect(throws: WireError.truncated(needed: 0xFFFF_FFFF, available: 0)) { try stringReader.readString() }
    }

    @Test func lengthLimitIsCheckedFirst() throws {
        var reader = ByteReader([3, 0, 0, 0, 1, 2, 3])
        #expect(throws: WireError.lengthTooLarge(3, limit: 2)) { try reader.readBytes(maximumLength: 2) }
        var stringReader = ByteReader([3, 0, 0, 0, 0x61, 0x62, 0x63])
        #expect(throws: WireError.lengthTooLarge(3, limit: 0)) { try stringReader.readString(maximumLength: 0) }
        var exact = ByteReader([3, 0, 0, 0, 0x61, 0x62, 0x63])
        #expect(try exact.readString(maximumLength: 3) == "abc")
    }

    @Test(arguments: [
        [0xFF] as [UInt8],  // never valid
        [0xC3],  // truncated two-byte sequence
        [0xC0, 0xAF],  // overlong "/"
        [0xED, 0xA0, 0x80],  // UTF-16 surrogate
        [0xF4, 0x90, 0x80, 0x80],  // beyond U+10FFFF
        [0x61, 0x80],  // lone continuation byte
    ])
    func invalidUTF8IsRejected(payload: [UInt8]) {
        var writer = ByteWriter()
        writer.writeBytes(payload)
        var reader = ByteReader(writer.bytes)
        #expect(throws: WireError.invalidUTF8) { try reader.readString() }
    }

    @Test func countsThatCannotFitAreTruncated() throws {
        var reader = ByteReader([0xFF, 0xFF, 0xFF, 0xFF, 0, 0])
        #expect(throws: WireError.truncated(needed: 0xFFFF_FFFF * 12, available: 2)) {
            try reader.readCount(minimumElementSize: 12)
        }
        var fits = ByteReader([2, 0, 0, 0, 1, 2])
        #expect(try fits.readCount(minimumElementSize: 1) == 2)
    }

    @Test func expectEndReportsTrailingBytes() throws {
        var reader = ByteReader([1, 2, 3])
        _ = try reader.readUInt8()
        #expect(throws: WireError.trailingBytes(2)) { try reader.expectEnd() }
    }

    @Test func errorsDescribeThemselves() {
        #expect(WireError.unknownMessageType(0x0A).description == "unknown message type 0x0a")
        #expect(WireError.unknownTag("DownloadEntry", 0xFF).description == "unknown DownloadEntry tag 0xff")
        #expect(WireError.truncated(needed: 4, available: 1).description.contains("needed 4"))
        #expect(WireError.messageTooLarge(20, limit: 10).description.contains("limit of 10"))
        #expect(WireError.trailingBytes(2).description.contains("2 unexpected"))
        #expect(WireError.lengthTooLarge(9, limit: 8).description.contains("9"))
        #expect(WireError.invalidUTF8.description.contains("UTF-8"))
        #expect(WireError.invalidValue("flag 2").description.contains("flag 2"))
    }
}
