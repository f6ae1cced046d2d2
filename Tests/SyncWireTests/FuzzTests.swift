import SyncWire
import TestSupport
import Testing

/// Random input must either decode to a message that re-encodes to exactly the same bytes, or throw a
/// `WireError` (the typed throws guarantee nothing else escapes); it must never trap.
@Suite struct FuzzTests {
    private static let validTypes: [UInt8] = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86]

    /// Decodes `bytes` both ways; returns how many decodes succeeded (each checked for canonical form).
    private func check(_ bytes: [UInt8]) -> Int {
        var successes = 0
        do {
            let message = try ClientMessage(decoding: bytes)
            #expect(message.encoded() == bytes, "seeded input \(bytes) decoded as \(message)")
            successes += 1
        } catch {
            _ = error.description
        }
        do {
            let message = try ServerMessage(decoding: bytes)
            #expect(message.encoded() == bytes, "seeded input \(bytes) decoded as \(message)")
            successes += 1
        } catch {
            _ = error.description
        }
        return successes
    }

    @Test func randomByteStrings() {
        var rng = SeededGenerator(seed: 0x5EED_0001)
        var successes = 0
        for _ in 0..<10_000 {
            let length = Int.random(in: 0...48, using: &rng)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            // Mostly start with a real type byte so decoding gets past the first field, and mostly use
            // small length/count fields so it gets further still.
            if !bytes.isEmpty, Bool.random(using: &rng) { bytes[0] = Self.validTypes.randomElement(using: &rng)! }
            for index in bytes.indices where index > 0 && Int.random(in: 0..<3, using: &rng) == 0 {
                bytes[index] = UInt8.random(in: 0...3, using: &rng)
            }
            successes += check(bytes)
        }
        #expect(successes > 0, "the fuzz loop never produced a valid message; it is not exploring much")
    }

    @Test func mutationsOfValidEncodings() {
        var rng = SeededGenerator(seed: 0x5EED_0002)
        let seeds = Samples.client.map { $0.encoded() } + Samples.server.map { $0.encoded() }
        var successes = 0
        for _ in 0..<10_000 {
            var bytes = seeds.randomElement(using: &rng)!
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                switch Int.random(in: 0..<5, using: &rng) {
                case 0 where !bytes.isEmpty:  // replace a byte
                    bytes[Int.random(in: bytes.indices, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
                case 1 where !bytes.isEmpty:  // flip a bit
                    bytes[Int.random(in: bytes.indices, using: &rng)] ^= 1 << UInt8.random(in: 0...7, using: &rng)
                case 2:  // insert a byte
                    bytes.insert(
                        UInt8.random(in: 0...255, using: &rng), at: Int.random(in: 0...bytes.count, using: &rng))
                case 3 where !bytes.isEmpty:  // delete a byte
                    bytes.remove(at: Int.random(in: bytes.indices, using: &rng))
                default:  // cut the tail
                    bytes.removeLast(Int.random(in: 0...bytes.count, using: &rng))
                }
            }
            successes += check(bytes)
        }
        #expect(successes > 0)
    }
}
