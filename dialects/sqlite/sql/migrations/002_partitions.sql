-- Partitions owned by relay sessions (leases they renew) replace per-row
-- leases; the writer computes each row's part.
CREATE TABLE IF NOT EXISTS {{table}}_meta (
    partitions INTEGER NOT NULL CHECK (partitions BETWEEN 1 AND 4096),
    created_at INTEGER NOT NULL
);
INSERT INTO {{table}}_meta (partitions, created_at)
SELECT {{partitions}}, CAST(strftime('%s', 'now') AS INTEGER) * 1000000
WHERE NOT EXISTS (SELECT 1 FROM {{table}}_meta);
-- The table is rebuilt, as SQLite can neither drop a default nor add a NOT
-- NULL column without one. No default: an older writer fails loudly instead
-- of writing rows no relay reads.
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
-- part 0 until the fill-partitions step sets it (pending and dead rows).
INSERT INTO {{table}}_rebuild (seq, id, aggregate_type, aggregate_id, event_type, payload, content_type, headers,
                               idempotency_key, critical, created_at, state, attempts, next_attempt_at, part,
                               last_error, published_at)
SELECT seq, id, aggregate_type, aggregate_id, event_type, payload, content_type, headers,
       idempotency_key, critical, created_at, state, attempts, next_attempt_at, 0,
       last_error, published_at
FROM {{table}}
ORDER BY seq;
-- AUTOINCREMENT goes on from the old high-water mark: a seq is never reused.
INSERT INTO sqlite_sequence (name, seq)
SELECT '{{table}}_rebuild', 0
WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = '{{table}}_rebuild');
UPDATE sqlite_sequence
SET seq = (SELECT MAX(s.seq) FROM sqlite_sequence s WHERE s.name IN ('{{table}}', '{{table}}_rebuild'))
WHERE name = '{{table}}_rebuild';
DROP TABLE {{table}};
ALTER TABLE {{table}}_rebuild RENAME TO {{table}};
-- step: fill-partitions
-- No (part, seq) index: SQLite cannot merge its per-partition runs in seq
-- order, so a read through it would sort; every write would pay for it.
CREATE INDEX IF NOT EXISTS {{name}}_claim_idx ON {{table}} (seq) WHERE state = 0;
-- Pending rows by aggregate: the hand-over's "nothing earlier pending"
-- check, requeue and skip by aggregate, the inspector's counts.
CREATE INDEX IF NOT EXISTS {{name}}_aggregate_idx ON {{table}} (aggregate_type, aggregate_id, seq) WHERE state = 0;
CREATE INDEX IF NOT EXISTS {{name}}_cleanup_idx ON {{table}} (published_at) WHERE state = 1;
-- SQLite has no session locks: an owner renews its lease, and a partition
-- whose lease ran out may be taken by another session.
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
CREATE TABLE IF NOT EXISTS {{table}}_relays (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    token      TEXT    NOT NULL UNIQUE,
    name       TEXT    NOT NULL,
    started_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
-- Aggregates held back behind a failed row (retry or dead): one row each.
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
-- The block goes on the aggregate's lowest retrying row (ORDER BY seq;
-- INSERT OR IGNORE keeps the first).
INSERT OR IGNORE INTO {{table}}_blocked (part, aggregate_type, aggregate_id, seq, dead, until)
SELECT part, aggregate_type, aggregate_id, seq, 0, next_attempt_at
FROM {{table}} WHERE state = 0 AND attempts > 0
ORDER BY seq;
-- The lock table stays for TryLock.
DELETE FROM {{table}}_locks WHERE name = 'claim'
