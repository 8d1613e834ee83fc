-- Partitions owned by relays replace per-row leases and the claim lock.
-- Every row gets the partition of its aggregate (dialects.PartitionOf,
-- computed by the writer); one relay session at a time owns a partition,
-- holding a lease on it that the session renews, and reads the partition's
-- pending rows with a plain SELECT.
--
-- The table's partition count, fixed at creation.
CREATE TABLE IF NOT EXISTS {{table}}_meta (
    partitions INTEGER NOT NULL CHECK (partitions BETWEEN 1 AND 4096),
    created_at INTEGER NOT NULL
);
INSERT INTO {{table}}_meta (partitions, created_at)
SELECT {{partitions}}, CAST(strftime('%s', 'now') AS INTEGER) * 1000000
WHERE NOT EXISTS (SELECT 1 FROM {{table}}_meta);
-- SQLite can neither drop a column default nor add a NOT NULL column
-- without one, so the table is rebuilt: part gets no default (a writer of
-- an older version, which does not know partitions, fails loudly instead
-- of writing rows no relay reads), and the lease columns locked_by and
-- locked_until are left behind.
CREATE TABLE {{table}}_rebuild (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    id              TEXT    NOT NULL UNIQUE,
    aggregate_type  TEXT    NOT NULL,
    aggregate_id    TEXT    NOT NULL,
    event_type      TEXT    NOT NULL,
    payload         BLOB,
    content_type    TEXT    NOT NULL DEFAULT '',
    headers         TEXT,
    idempotency_key TEXT,
    critical        INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL,
    state           INTEGER NOT NULL DEFAULT 0,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    part            INTEGER NOT NULL,
    last_error      TEXT,
    published_at    INTEGER
);
-- part 0 for now: the fill-partitions step below sets it for the rows a
-- relay or an operator still acts on (pending and dead).
INSERT INTO {{table}}_rebuild (seq, id, aggregate_type, aggregate_id, event_type, payload, content_type, headers,
                               idempotency_key, critical, created_at, state, attempts, next_attempt_at, part,
                               last_error, published_at)
SELECT seq, id, aggregate_type, aggregate_id, event_type, payload, content_type, headers,
       idempotency_key, critical, created_at, state, attempts, next_attempt_at, 0,
       last_error, published_at
FROM {{table}}
ORDER BY seq;
-- AUTOINCREMENT must go on from the old table's high-water mark, not from
-- the highest seq left in it: a seq is never reused, even after the rows
-- that had the highest ones were deleted.
INSERT INTO sqlite_sequence (name, seq)
SELECT '{{table}}_rebuild', 0
WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = '{{table}}_rebuild');
UPDATE sqlite_sequence
SET seq = (SELECT MAX(s.seq) FROM sqlite_sequence s WHERE s.name IN ('{{table}}', '{{table}}_rebuild'))
WHERE name = '{{table}}_rebuild';
DROP TABLE {{table}};
ALTER TABLE {{table}}_rebuild RENAME TO {{table}};
-- step: fill-partitions
-- Pending rows in seq order: the relay's read walks it and stops at its
-- limit (see read.sql). There is no (part, seq) index as on PostgreSQL: no
-- statement here would use it (SQLite cannot merge the per-partition runs
-- of such an index in seq order, so a read through it sorts every pending
-- row of its partitions), and every insert and mark would pay for it.
CREATE INDEX IF NOT EXISTS {{name}}_claim_idx ON {{table}} (seq) WHERE state = 0;
-- Pending rows by aggregate: the hand-over check of a committing
-- transaction, requeue and skip by aggregate, the inspector's counts.
CREATE INDEX IF NOT EXISTS {{name}}_aggregate_idx ON {{table}} (aggregate_type, aggregate_id, seq) WHERE state = 0;
CREATE INDEX IF NOT EXISTS {{name}}_cleanup_idx ON {{table}} (published_at) WHERE state = 1;
-- One row per partition: the owning session's token (the fence of every
-- mark and failure), how many times it was taken, and until when the
-- owner's lease runs (SQLite has no session locks: a session renews its
-- leases, and a partition whose lease ran out may be taken by another).
CREATE TABLE IF NOT EXISTS {{table}}_partitions (
    part       INTEGER PRIMARY KEY,
    owner      TEXT,
    epoch      INTEGER NOT NULL DEFAULT 0,
    taken_at   INTEGER,
    expires_at INTEGER
);
WITH RECURSIVE g (p) AS (
    SELECT 0
    UNION ALL
    SELECT p + 1 FROM g WHERE p + 1 < (SELECT partitions FROM {{table}}_meta)
)
INSERT OR IGNORE INTO {{table}}_partitions (part) SELECT p FROM g;
-- Relay sessions; a session is live while its lease (expires_at) runs.
CREATE TABLE IF NOT EXISTS {{table}}_relays (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    token      TEXT    NOT NULL UNIQUE,
    name       TEXT    NOT NULL,
    started_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
-- Aggregates held back behind a failed row: until `until` for a retry,
-- until requeued or skipped for a dead row. Small: one row per blocked
-- aggregate.
CREATE TABLE IF NOT EXISTS {{table}}_blocked (
    part           INTEGER NOT NULL,
    aggregate_type TEXT    NOT NULL,
    aggregate_id   TEXT    NOT NULL,
    seq            INTEGER NOT NULL,
    dead           INTEGER NOT NULL,
    until          INTEGER NOT NULL,
    PRIMARY KEY (part, aggregate_type, aggregate_id)
);
CREATE INDEX IF NOT EXISTS {{name}}_blocked_seq_idx ON {{table}}_blocked (seq);
-- Rows backing off after a failure keep their aggregate held back: the
-- block is on the aggregate's lowest retrying row (ORDER BY seq, and
-- INSERT OR IGNORE keeps the first row of each aggregate).
INSERT OR IGNORE INTO {{table}}_blocked (part, aggregate_type, aggregate_id, seq, dead, until)
SELECT part, aggregate_type, aggregate_id, seq, 0, next_attempt_at
FROM {{table}} WHERE state = 0 AND attempts > 0
ORDER BY seq;
-- What partitions make dead: the claim lock row (the lock table stays for
-- TryLock).
DELETE FROM {{table}}_locks WHERE name = 'claim'
