import Foundation
import SyncServer
import TestSupport
import Testing

@testable import SyncEngine

/// A partition name is its exact UTF-8 bytes on the client too, as on the server and in file names: the
/// NFC and NFD spellings of one name are two partitions (Swift's `String ==` would fold them into one).
@Suite(.timeLimit(.minutes(5))) struct ExactPartitionNameTests {
    @Test("a user's NFC and NFD spellings of a name open two sessions, each with its own data")
    func spellingsOpenTwoSessions() async throws {
        let fixture = try await EngineFixture()
        defer { fixture.directory.remove() }
        let user = try await fixture.app.login(.anonymous)
        let nfc = try await user.openSession(partition: "caf\u{E9}")
        let nfd = try await user.openSession(partition: "cafe\u{301}")
        #expect(nfc !== nfd)
        #expect(nfc.partition.utf8.elementsEqual("caf\u{E9}".utf8))
        #expect(nfd.partition.utf8.elementsEqual("cafe\u{301}".utf8))
        // The same spelling again is the session already open.
        #expect(try await user.openSession(partition: "caf\u{E9}") === nfc)

        _ = try await nfc.write(Data("composed".utf8))
        try await nfc.wait(for: .upload)
        #expect(try await fixture.server.changesets(in: "caf\u{E9}").map(\.data) == [Array("composed".utf8)])
        #expect(try await fixture.server.changesets(in: "cafe\u{301}").isEmpty)
        try await fixture.app.close()
    }
}
