import TestSupport
import Testing

@testable import SyncStorage

@Suite("Store file names")
struct StoreFileNameTests {
    private func name(_ partition: String) -> String { StoreFileName.forPartition(partition, suffix: ".log") }

    /// What every file name must be: not empty, not `.` or `..`, not hidden, no `/` or NUL, only the
    /// characters the encoding produces, and short enough for every file system.
    private func expectSafe(_ partition: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let encoded = StoreFileName.forPartition(partition, suffix: "")
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789-_^%~".unicodeScalars)
        #expect(!encoded.isEmpty, "\(partition.debugDescription)", sourceLocation: sourceLocation)
        #expect(encoded != "." && encoded != "..", "\(partition.debugDescription)", sourceLocation: sourceLocation)
        #expect(!encoded.hasPrefix("."), "\(partition.debugDescription)", sourceLocation: sourceLocation)
        #expect(
            encoded.unicodeScalars.allSatisfy { allowed.contains($0) }, "\(partition.debugDescription) → \(encoded)",
            sourceLocation: sourceLocation)
        #expect(
            encoded.utf8.count <= StoreFileName.maximumEncodedLength, "\(partition.debugDescription)",
            sourceLocation: sourceLocation)
    }

    @Test("names that differ only in case map to names that differ in more than case")
    func caseInsensitiveFileSystems() {
        for (one, other) in [("Tasks", "tasks"), ("ABC", "abc"), ("aBc", "AbC"), ("Ä", "ä"), ("X", "x")] {
            #expect(name(one) != name(other))
            #expect(
                name(one).lowercased() != name(other).lowercased(), "\(one) → \(name(one)), \(other) → \(name(other))")
        }
        #expect(name("Tasks") == "^tasks.log")
        #expect(name("tasks") == "tasks.log")
    }

    @Test("'/', '.', '..', NUL, control bytes and the escape characters themselves are escaped")
    func escapes() {
        #expect(name("a/b") == "a%2fb.log")
        #expect(name(".") == "%2e.log")
        #expect(name("..") == "%2e%2e.log")
        #expect(name("../etc/passwd") == "%2e%2e%2fetc%2fpasswd.log")
        #expect(name("\0") == "%00.log")
        #expect(name("a\0b") == "a%00b.log")
        #expect(name("%") == "%25.log")
        #expect(name("^") == "%5e.log")
        #expect(name("~") == "%7e.log")
        #expect(name("é") == "%c3%a9.log")
        // An escape sequence written out is not the character it escapes.
        #expect(name("%2f") != name("/"))
        #expect(name("^a") != name("A"))
        for partition in [
            "/", ".", "..", "a/b", "../etc/passwd", "\0", "a\0b", "\n", "\t", ".hidden", "%", "^", "~", " ", "",
            "\u{7F}", "名前", "🙂",
        ] {
            expectSafe(partition)
        }
    }

    @Test("long names keep a prefix and add a SHA-256: within the length limit, distinct when only the end differs")
    func longNames() {
        let stem = String(repeating: "p", count: 300)
        let one = name(stem + "1")
        let other = name(stem + "2")
        #expect(one != other)
        #expect(one.hasPrefix(String(repeating: "p", count: 100)))
        #expect(one.contains("~"))
        #expect(one.utf8.count <= StoreFileName.maximumEncodedLength + ".log".utf8.count)
        // Short names are never hashed; the longest one that fits is kept whole.
        let fits = String(repeating: "q", count: StoreFileName.maximumEncodedLength)
        #expect(name(fits) == fits + ".log")
        #expect(name(fits + "q") != fits + "q.log")
        // A name that escapes to more than the limit is hashed too.
        expectSafe(String(repeating: "/", count: 100))
        expectSafe(String(repeating: "Ü", count: 200))
    }

    @Test("injective, and distinct without regard to case, on a seeded random set", arguments: [UInt64(0x5709_E4A3)])
    func injectiveOnRandomNames(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        let alphabet: [Character] = Array("aAbBzZ09-_./%^~ \0\nÄäé名🙂")
        var byName: [String: String] = [:]
        var seen = Set<String>()
        for index in 0..<20_000 {
            // Mostly short names (collisions among them are likely), some long enough to be hashed.
            let length =
                index % 10 == 0
                ? Int.random(in: 150...260, using: &generator) : Int.random(in: 1...6, using: &generator)
            let partition = String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
            guard seen.insert(partition).inserted else { continue }
            let encoded = StoreFileName.forPartition(partition, suffix: ".log").lowercased()
            if let earlier = byName[encoded] {
                Issue.record(
                    "seed \(seed): \(earlier.debugDescription) and \(partition.debugDescription) both map to \(encoded)"
                )
            }
            byName[encoded] = partition
            if index % 97 == 0 { expectSafe(partition) }
        }
        #expect(seen.count > 10_000, "seed \(seed): too few distinct names to mean anything")
    }
}
