import Logging
import PostgresNIO

/// The tables and the append function a `PostgresPartitionStore` uses, created or migrated when the store
/// opens.
///
/// `sync_schema_version` holds one row: the version of the schema in the database. Opening applies the
/// migrations after it, in order, in one transaction that holds an advisory lock, so front ends starting
/// at once migrate once. A database whose version is newer than this code knows is refused
/// (`PostgresPartitionStoreError.schemaTooNew`): an older front end never writes a newer schema.
///
/// Version 1:
/// - `sync_partitions(id, name, latest_version)`: one row per partition; `latest_version` is the server
///   version of the log's last entry. Appends lock this row (`SELECT … FOR UPDATE`), which orders them.
/// - `sync_changesets(partition_id, server_version, client_file_id, client_version, owner, data)`: the
///   logs, primary key (partition_id, server_version); `UNIQUE (partition_id, client_file_id,
///   client_version)` refuses a client's changeset stored twice. 64-bit client file ids are stored as
///   their signed bit pattern.
/// - `sync_append(partition, first_version, client_file_ids, client_versions, owners, data)`: the append
///   in one round trip (see `PostgresPartitionStore.append`); returns the log's latest version found
///   under the lock: `first_version - 1` when it appended, anything else when it refused.
///
/// Version 2:
/// - `sync_partitions.history_id`: the identity of the partition's log (`PartitionStore.historyID(of:)`),
///   a random non-zero 64-bit number (stored as its signed bit pattern) set the first time it is read and
///   kept with the row; `NULL` until then (rows of version 1 get theirs that way too).
///
/// Version 3 (changeset origins, `PartitionStore.storesChangesetOrigins`):
/// - `sync_changesets.origin_client_file_id`, `origin_client_version`: the entry's origin
///   (`StoredChangeset.origin`), both set or both `NULL` (no origin of its own: its client file and version;
///   every row of an older version); the file id as its signed bit pattern.
/// - `sync_changesets.duplicate_of`: the server version of the entry it duplicates
///   (`StoredChangeset.duplicateOf`), `NULL` when it integrated its changeset. The columns are added
///   without a default and their checks `NOT VALID` (old rows are all `NULL`), so the migration rewrites
///   and scans nothing.
/// - `sync_append(…, p_has_origin, p_origin_files, p_origin_versions, p_duplicate_of)`: the append with
///   them (`p_duplicate_of` 0: none). The version 1 function stays, so a front end of version 2 still
///   running during a rolling upgrade keeps appending (without origins, as before).
enum PostgresSchema {
    /// The version this code creates and understands.
    static let version = 3
    /// The channel appends are announced on; the payload is `"<partition id> <latest version>"`.
    static let channel = "sync_appends"
    /// The advisory lock key migrations hold (a constant of this schema: "SyncPG16").
    static let migrationLock: Int64 = 0x5379_6E63_5047_3136
    /// The advisory lock key a store with `maximumPartitions` holds (for one transaction) while it counts
    /// `sync_partitions` and inserts a partition's row, so that creations on every front end are
    /// serialised against the cap ("SyncPGC1"). Not part of the schema: no migration adds it.
    static let creationLock: Int64 = 0x5379_6E63_5047_4331

    /// The statements that take a database from version `index` to `index + 1`.
    static let migrations: [[String]] = [
        [
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
        ],
        ["ALTER TABLE sync_partitions ADD COLUMN history_id bigint CHECK (history_id <> 0)"],
        [
            """
            ALTER TABLE sync_changesets
                ADD COLUMN origin_client_file_id bigint,
                ADD COLUMN origin_client_version bigint,
                ADD COLUMN duplicate_of bigint,
                ADD CONSTRAINT sync_changesets_origin_whole
                    CHECK ((origin_client_file_id IS NULL) = (origin_client_version IS NULL)) NOT VALID,
                ADD CONSTRAINT sync_changesets_duplicate_earlier
                    CHECK (duplicate_of >= 1 AND duplicate_of < server_version) NOT VALID
            """,
            """
            CREATE FUNCTION sync_append(
                p_partition bigint, p_first bigint, p_files bigint[], p_versions bigint[], p_owners text[],
                p_data bytea[], p_has_origin boolean[], p_origin_files bigint[], p_origin_versions bigint[],
                p_duplicate_of bigint[]
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
                INSERT INTO sync_changesets (
                    partition_id, server_version, client_file_id, client_version, owner, data,
                    origin_client_file_id, origin_client_version, duplicate_of
                )
                SELECT p_partition, p_first + ordinality - 1, f, v, o, d,
                    CASE WHEN h THEN origin_file END, CASE WHEN h THEN origin_version END, NULLIF(dup, 0)
                FROM unnest(
                    p_files, p_versions, p_owners, p_data, p_has_origin, p_origin_files, p_origin_versions,
                    p_duplicate_of
                ) WITH ORDINALITY AS u (f, v, o, d, h, origin_file, origin_version, dup, ordinality);
                UPDATE sync_partitions SET latest_version = last_version WHERE id = p_partition;
                PERFORM pg_notify('sync_appends', p_partition || ' ' || last_version);
                RETURN found_latest;
            END
            $$
            """,
        ],
    ]

    /// Creates or migrates the schema; returns the version it found (0 for an empty database).
    static func migrate(_ client: PostgresClient, logger: Logger) async throws -> Int {
        try await client.withTransaction(logger: logger) { connection -> Int in
            try await connection.query("SELECT pg_advisory_xact_lock(\(migrationLock))", logger: logger)
            try await connection.query(
                "CREATE TABLE IF NOT EXISTS sync_schema_version (version integer NOT NULL)", logger: logger)
            var found = 0
            for try await version in try await connection.query(
                "SELECT version FROM sync_schema_version", logger: logger
            ).decode(Int32.self) {
                found = max(found, Int(version))
            }
            guard found <= version else {
                throw PostgresPartitionStoreError.schemaTooNew(found: found, supported: version)
            }
            for statements in migrations[found...] {
                for statement in statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
            }
            if found < version {
                try await connection.query("DELETE FROM sync_schema_version", logger: logger)
                try await connection.query(
                    "INSERT INTO sync_schema_version (version) VALUES (\(Int32(version)))", logger: logger)
            }
            return found
        }
    }
}
