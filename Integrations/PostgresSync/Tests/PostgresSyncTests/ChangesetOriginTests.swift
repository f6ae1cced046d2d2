import Foundation
import PostgresNIO
import PostgresSync
import SyncServer
import TestSupport
import Testing

/// Changeset origins in PostgreSQL (issue 21): the store keeps each entry's origin and duplicate mark, so
/// the front ends integrate each origin once, as `sync-server`'s file store does (the root's
/// `ChangesetOriginTests` and `RecoveredOriginTests`; finding 13 of docs/RELIABILITY.md).
extension PostgresTests {
    @Suite("Changeset origins")
    struct ChangesetOriginTests {
        private func bytes(_ value: UInt8) -> [UInt8] { Array(repeating: value, count: 4) }

        @Test("the store keeps origins and duplicate marks: summaries and read give them back, after reopening too")
        func originsStoredAndReadBack() async throws {
            let url = try await TestDatabase.create()
            let plain = StoredChangeset(serverVersion: 1, clientFileID: 3, clientVersion: 1, data: [1, 2], owner: "o")
            // A client file id above Int64.max (stored as its bit pattern), a duplicate of entry 1.
            let duplicate = StoredChangeset(
                serverVersion: 2, clientFileID: UInt64.max - 4, clientVersion: 1, data: [1, 2], owner: "o",
                origin: ChangesetOrigin(clientFileID: 3, clientVersion: 1), duplicateOf: 1)
            // A recovered changeset with an origin of its own, integrated (not a duplicate).
            let recovered = StoredChangeset(
                serverVersion: 3, clientFileID: 4, clientVersion: 1, data: [9], owner: "o",
                origin: ChangesetOrigin(clientFileID: UInt64.max, clientVersion: 7))
            let written = [plain, duplicate, recovered]
            do {
                let store = try await openStore(url)
                #expect(store.storesChangesetOrigins)
                try await store.append(written, to: "p")
                #expect(try await store.summaries(of: "p") == written.map(\.summary))
                #expect(try await store.read(1...3, of: "p") == written)
                await store.close()
            }
            let store = try await openStore(url)
            #expect(try await store.summaries(of: "p") == written.map(\.summary))
            #expect(try await store.summaries(of: "p", after: 1) == written.dropFirst().map(\.summary))
            #expect(try await store.read(2...3, of: "p") == Array(written.dropFirst()))
            await store.close()
        }

        @Test(
            "an upload of an origin the log holds with the same bytes becomes a duplicate entry, reaching others empty; other bytes under that origin are integrated; both survive a restart"
        )
        func duplicateOriginThroughTheServer() async throws {
            let url = try await TestDatabase.create()
            let first = try await openStore(url, name: "first")
            let server = try await SyncServer.embedded(configuration: .init(store: first))
            let writer = try await WireTestClient.welcomed(to: server)
            let reader = try await WireTestClient.welcomed(to: server)
            let recovered = try await WireTestClient.welcomed(to: server)
            try await writer.bind(clientFileID: 10)
            try await reader.bind(clientFileID: 20)
            try await recovered.bind(clientFileID: 30)

            // Client file 10 writes bytes(1) as its client version 1.
            writer.upload(1, bytes(1))
            #expect(try await writer.nextDownload().entries == [.acknowledged(serverVersion: 1, clientVersion: 1)])
            #expect(try await reader.nextDownload().entries == [.changeset(serverVersion: 1, data: bytes(1))])
            _ = try await recovered.nextDownload()
            // Client file 30 holds it again, recovered by a client reset of a restored copy of client file 10.
            recovered.upload(1, bytes(1), origin: ChangesetOrigin(clientFileID: 10, clientVersion: 1))
            #expect(try await recovered.nextDownload().entries == [.acknowledged(serverVersion: 2, clientVersion: 1)])
            #expect(try await reader.nextDownload().entries == [.changeset(serverVersion: 2, data: [])])
            _ = try await writer.nextDownload()
            // Its own next changeset follows.
            recovered.upload(2, bytes(2))
            #expect(try await recovered.nextDownload().entries == [.acknowledged(serverVersion: 3, clientVersion: 2)])
            #expect(try await reader.nextDownload().entries == [.changeset(serverVersion: 3, data: bytes(2))])
            _ = try await writer.nextDownload()
            // The same origin with other bytes (a copied client file that reused the version) is integrated.
            recovered.upload(3, bytes(9), origin: ChangesetOrigin(clientFileID: 10, clientVersion: 1))
            #expect(try await recovered.nextDownload().entries == [.acknowledged(serverVersion: 4, clientVersion: 3)])
            #expect(try await reader.nextDownload().entries == [.changeset(serverVersion: 4, data: bytes(9))])
            let log = try await server.changesets(in: "p")
            #expect(log.map(\.duplicateOf) == [nil, 1, nil, nil])
            #expect(log.map(\.effectiveOrigin.clientFileID) == [10, 10, 30, 10])
            await server.stop()
            await first.close()

            // A restarted front end (a new store on the same database) reads the origins back.
            let second = try await openStore(url, name: "second")
            let restarted = try await SyncServer.embedded(configuration: .init(store: second))
            let again = try await WireTestClient.welcomed(to: restarted)
            try await again.bind(clientFileID: 40)
            // Recovered twice: client file 30's copy of client file 10's changeset 1, same bytes.
            again.upload(1, bytes(1), origin: ChangesetOrigin(clientFileID: 10, clientVersion: 1))
            #expect(try await again.nextDownload().entries == [.acknowledged(serverVersion: 5, clientVersion: 1)])
            // Client file 30's own changeset 2, recovered.
            again.upload(2, bytes(2), origin: ChangesetOrigin(clientFileID: 30, clientVersion: 2))
            #expect(try await again.nextDownload().entries == [.acknowledged(serverVersion: 6, clientVersion: 2)])
            // A new reader gets every changeset once, duplicates empty.
            let fresh = try await WireTestClient.welcomed(to: restarted)
            let entries = try await fresh.bind(clientFileID: 50).flatMap(\.entries)
            #expect(
                entries.map { entry -> [UInt8] in
                    if case .changeset(_, let data) = entry { data } else { [0xFF] }
                } == [bytes(1), [], bytes(2), bytes(9), [], []])
            #expect(try await restarted.changesets(in: "p").map(\.duplicateOf) == [nil, 1, nil, nil, 1, 3])
            await restarted.stop()
            await second.close()
        }

        @Test(
            "a database of schema version 2 (no origin columns) is migrated: old entries read as before, without origins; new ones keep theirs; a version 2 front end's append still works"
        )
        func migratedFromVersion2() async throws {
            let url = try await TestDatabase.create()
            try await TestDatabase.admin(url) { connection, logger in
                for statement in Self.schemaVersion2 + [
                    "INSERT INTO sync_schema_version (version) VALUES (2)",
                    "INSERT INTO sync_partitions (name, latest_version) VALUES ('p', 1)",
                    """
                    INSERT INTO sync_changesets (partition_id, server_version, client_file_id, client_version, owner, data)
                    VALUES ((SELECT id FROM sync_partitions WHERE name = 'p'), 1, 5, 1, 'o', '\\x01020304')
                    """,
                ] {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
            }
            let old = StoredChangeset(
                serverVersion: 1, clientFileID: 5, clientVersion: 1, data: [1, 2, 3, 4], owner: "o")
            let store = try await openStore(url)
            #expect(try await store.summaries(of: "p") == [old.summary])
            #expect(try await store.read(1...1, of: "p") == [old])
            let duplicate = StoredChangeset(
                serverVersion: 2, clientFileID: 6, clientVersion: 1, data: [1, 2, 3, 4], owner: "o",
                origin: ChangesetOrigin(clientFileID: 5, clientVersion: 1), duplicateOf: 1)
            try await store.append([duplicate], to: "p")
            // A front end of schema version 2 still running during a rolling upgrade appends with the old
            // function: its entry has no origin.
            try await TestDatabase.admin(url) { connection, logger in
                try await connection.query(
                    """
                    SELECT sync_append((SELECT id FROM sync_partitions WHERE name = 'p'), 3, ARRAY[7]::bigint[],
                        ARRAY[1]::bigint[], ARRAY['o']::text[], ARRAY['\\x09'::bytea])
                    """, logger: logger)
            }
            let legacy = StoredChangeset(serverVersion: 3, clientFileID: 7, clientVersion: 1, data: [9], owner: "o")
            #expect(try await store.summaries(of: "p") == [old.summary, duplicate.summary, legacy.summary])
            #expect(try await store.read(1...3, of: "p") == [old, duplicate, legacy])
            await store.close()
            let versions = try await TestDatabase.admin(url) { connection, logger in
                var versions: [Int32] = []
                for try await version in try await connection.query(
                    "SELECT version FROM sync_schema_version", logger: logger
                ).decode(Int32.self) { versions.append(version) }
                return versions
            }
            #expect(versions == [3])
        }

        /// The schema as version 2 of `PostgresSchema` created it (a fixture: what databases of that version
        /// hold, whatever the code creates today).
        static let schemaVersion2 = [
            "CREATE TABLE sync_schema_version (version integer NOT NULL)",
            """
            CREATE TABLE sync_partitions (
                id bigserial PRIMARY KEY,
                name text NOT NULL UNIQUE,
                latest_version bigint NOT NULL DEFAULT 0
            )
            """,
            """
            CREATE TABLE sync_changesets (
                partition_id bigint NOT NULL REFERENCES sync_partitions (id),
                server_version bigint NOT NULL,
                client_file_id bigint NOT NULL,
                client_version bigint NOT NULL,
                owner text NOT NULL,
                data bytea NOT NULL,
                PRIMARY KEY (partition_id, server_version),
                UNIQUE (partition_id, client_file_id, client_version)
            )
            """,
            """
            CREATE FUNCTION sync_append(
                p_partition bigint, p_first bigint, p_files bigint[], p_versions bigint[], p_owners text[],
                p_data bytea[]
            ) RETURNS bigint LANGUAGE plpgsql AS $$
            DECLARE
                found_latest bigint;
                last_version bigint := p_first + cardinality(p_files) - 1;
            BEGIN
                SELECT latest_version INTO found_latest FROM sync_partitions WHERE id = p_partition FOR UPDATE;
                IF found_latest IS NULL THEN
                    RAISE EXCEPTION 'no partition with id %', p_partition;
                END IF;
                IF found_latest <> p_first - 1 THEN
                    RETURN found_latest;
                END IF;
                INSERT INTO sync_changesets (partition_id, server_version, client_file_id, client_version, owner, data)
                SELECT p_partition, p_first + ordinality - 1, f, v, o, d
                FROM unnest(p_files, p_versions, p_owners, p_data) WITH ORDINALITY AS u (f, v, o, d, ordinality);
                UPDATE sync_partitions SET latest_version = last_version WHERE id = p_partition;
                PERFORM pg_notify('sync_appends', p_partition || ' ' || last_version);
                RETURN found_latest;
            END
            $$
            """,
            "ALTER TABLE sync_partitions ADD COLUMN history_id bigint CHECK (history_id <> 0)",
        ]
    }
}
