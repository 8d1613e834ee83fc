-- Partitions owned by relays replace per-row leases and the claim lock.
-- Every row gets the partition of its aggregate (dialects.PartitionOf,
-- computed by the writer); one relay session at a time owns a partition,
-- holding an advisory lock on it on its session connection, and reads the
-- partition's pending rows with a plain SELECT.
ALTER TABLE {{table}} ADD COLUMN IF NOT EXISTS part INTEGER NOT NULL DEFAULT 0;
-- The table's partition count, fixed at creation.
CREATE TABLE IF NOT EXISTS {{table}}_meta (
    partitions INTEGER NOT NULL CHECK (partitions BETWEEN 1 AND 4096),
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
INSERT INTO {{table}}_meta (partitions) SELECT {{partitions}} WHERE NOT EXISTS (SELECT 1 FROM {{table}}_meta);
-- step: fill-partitions
-- No default from now on: a writer of an older version, which does not
-- know partitions, fails loudly instead of writing rows no relay reads.
ALTER TABLE {{table}} ALTER COLUMN part DROP DEFAULT;
-- No (part, seq) index: the relay's read walks claim_idx (pending rows in
-- seq order) and keeps its partitions' rows, which stops at the limit; an
-- index by partition would need a sort of every pending row of the
-- relay's partitions for each read. The hand-over check probes
-- aggregate_idx.
-- One row per partition: the owning session's token (the fence of every
-- mark and failure) and how many times it was taken.
CREATE TABLE IF NOT EXISTS {{table}}_partitions (
    part       INTEGER PRIMARY KEY,
    owner      TEXT,
    epoch      BIGINT NOT NULL DEFAULT 0,
    taken_at   TIMESTAMPTZ,
    expires_at TIMESTAMPTZ
);
INSERT INTO {{table}}_partitions (part)
SELECT g FROM {{table}}_meta m, generate_series(0, m.partitions - 1) g
ON CONFLICT (part) DO NOTHING;
-- Relay sessions. A session holds the advisory lock (namespace + 1, id)
-- while it lives; a row whose lock nobody holds is a relay that is gone.
CREATE TABLE IF NOT EXISTS {{table}}_relays (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    token      TEXT NOT NULL UNIQUE,
    name       TEXT NOT NULL,
    started_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ
);
-- Aggregates held back behind a failed row: until `until` for a retry,
-- until requeued or skipped for a dead row. Small: one row per blocked
-- aggregate.
CREATE TABLE IF NOT EXISTS {{table}}_blocked (
    part           INTEGER NOT NULL,
    aggregate_type TEXT    NOT NULL,
    aggregate_id   TEXT    NOT NULL,
    seq            BIGINT  NOT NULL,
    dead           BOOLEAN NOT NULL,
    until          TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (part, aggregate_type, aggregate_id)
);
CREATE INDEX IF NOT EXISTS {{name}}_blocked_seq_idx ON {{table}}_blocked (seq);
-- Rows backing off after a failure keep their aggregate held back.
INSERT INTO {{table}}_blocked (part, aggregate_type, aggregate_id, seq, dead, until)
SELECT DISTINCT ON (part, aggregate_type, aggregate_id) part, aggregate_type, aggregate_id, seq, FALSE, next_attempt_at
FROM {{table}} WHERE state = 0 AND attempts > 0
ORDER BY part, aggregate_type, aggregate_id, seq
ON CONFLICT DO NOTHING;
-- What partitions make dead: the claim lock row, per-row leases and the
-- claim functions.
DELETE FROM {{table}}_locks WHERE name = 'claim';
DROP FUNCTION IF EXISTS {{table}}_claim(TEXT, TIMESTAMPTZ, TIMESTAMPTZ, INTEGER, TEXT, INTEGER);
DROP FUNCTION IF EXISTS {{table}}_claim(TEXT, TIMESTAMPTZ, TIMESTAMPTZ, INTEGER, TEXT);
DROP FUNCTION IF EXISTS {{table}}_mark(TEXT, TEXT, TIMESTAMPTZ);
ALTER TABLE {{table}} DROP COLUMN IF EXISTS locked_by;
ALTER TABLE {{table}} DROP COLUMN IF EXISTS locked_until;
-- Marks (p_at set) or deletes (p_at NULL) the rows of p_seqs (an array
-- literal) in partitions p_token owns, removes the retry blocks of
-- p_unblock, and returns how many rows it changed. One prepared statement
-- (lib/pq: one round trip instead of two), and, transaction-local,
-- synchronous_commit off: the COMMIT does not wait for the WAL flush. A
-- mark lost in a server crash leaves its rows pending: they are published
-- again, which at-least-once delivery allows (and JetStream's duplicate
-- window drops while it lasts, by Nats-Msg-Id).
CREATE OR REPLACE FUNCTION {{table}}_mark(p_token TEXT, p_seqs TEXT, p_unblock TEXT, p_at TIMESTAMPTZ)
RETURNS BIGINT
LANGUAGE plpgsql VOLATILE
AS $mark$
DECLARE
    v_n BIGINT;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    IF p_unblock IS NOT NULL THEN
        DELETE FROM {{table}}_blocked b
        USING {{table}}_partitions p
        WHERE b.seq = ANY (p_unblock::bigint[]) AND NOT b.dead AND p.part = b.part AND p.owner = p_token;
    END IF;
    IF p_at IS NULL THEN
        DELETE FROM {{table}} t
        USING {{table}}_partitions p
        WHERE t.seq = ANY (p_seqs::bigint[]) AND t.state = 0 AND p.part = t.part AND p.owner = p_token;
    ELSE
        UPDATE {{table}} t SET state = 1, published_at = p_at
        FROM {{table}}_partitions p
        WHERE t.seq = ANY (p_seqs::bigint[]) AND t.state = 0 AND p.part = t.part AND p.owner = p_token;
    END IF;
    GET DIAGNOSTICS v_n = ROW_COUNT;
    RETURN v_n;
END
$mark$
;
-- A relay's read of its partitions: pending, due rows in seq order, without
-- any row of an aggregate blocked by an earlier row (dead, or retrying and
-- not yet due). A plain SELECT: no lock, no write; the relay's session
-- proves it owns the partitions. As a function so that, transaction-local
-- (set_config with is_local: the autocommit statement is the
-- transaction), the planner walks claim_idx in seq order and stops at the
-- limit (enable_sort and enable_bitmapscan off): on a freshly loaded
-- backlog, before statistics catch up, it otherwise fetched every pending
-- row of the partitions and sorted them for each read. A read ahead (p_after
-- > 0, while the relay's previous batch is in flight) leaves out every
-- aggregate that still has a pending row at or below p_after: such a row
-- committed after the previous read (a lower seq committing late) or is in
-- flight, and a later row of its aggregate must not go first (an
-- aggregate_idx probe per candidate, only in reads ahead). jit off: past
-- jit_above_cost JIT compiles for longer than the read takes.
CREATE OR REPLACE FUNCTION {{table}}_read(p_parts TEXT, p_after BIGINT, p_now TIMESTAMPTZ, p_limit INTEGER)
RETURNS TABLE (seq BIGINT, id TEXT, aggregate_type TEXT, aggregate_id TEXT, event_type TEXT, payload BYTEA,
               content_type TEXT, headers TEXT, idempotency_key TEXT, critical BOOLEAN, created_at TIMESTAMPTZ,
               attempts INTEGER, part INTEGER, payload_json TEXT)
LANGUAGE plpgsql VOLATILE
AS $read$
DECLARE
    v_parts INTEGER[] := p_parts::int[];
BEGIN
    PERFORM set_config('enable_sort', 'off', true);
    PERFORM set_config('enable_bitmapscan', 'off', true);
    PERFORM set_config('jit', 'off', true);
    IF p_after = 0 THEN
        RETURN QUERY
        SELECT o.seq, o.id::text, o.aggregate_type, o.aggregate_id, o.event_type, o.payload, o.content_type,
               o.headers::text, o.idempotency_key, o.critical, o.created_at, o.attempts, o.part, o.payload_json::text
        FROM {{table}} o
        WHERE o.state = 0
          AND o.part = ANY (v_parts)
          AND o.next_attempt_at <= p_now
          AND NOT EXISTS (
              SELECT 1 FROM {{table}}_blocked b
              WHERE b.part = o.part AND b.aggregate_type = o.aggregate_type AND b.aggregate_id = o.aggregate_id
                AND b.seq < o.seq AND (b.dead OR b.until > p_now)
          )
        ORDER BY o.seq
        LIMIT p_limit;
        RETURN;
    END IF;
    -- A read ahead looks at a window of 4 x p_limit candidates past
    -- p_after only: when the batch in flight holds most aggregates, nearly
    -- every candidate is left out, and an unbounded look would walk the
    -- whole backlog to return nothing (2 and 4 relays drained 3-7x slower
    -- than one that way). A short or empty result is followed by a read
    -- from the start.
    RETURN QUERY
    SELECT o.seq, o.id::text, o.aggregate_type, o.aggregate_id, o.event_type, o.payload, o.content_type,
           o.headers::text, o.idempotency_key, o.critical, o.created_at, o.attempts, o.part, o.payload_json::text
    FROM (
        SELECT w.* FROM {{table}} w
        WHERE w.state = 0
          AND w.part = ANY (v_parts)
          AND w.seq > p_after
          AND w.next_attempt_at <= p_now
        ORDER BY w.seq
        LIMIT 4 * p_limit
    ) o
    WHERE NOT EXISTS (
          SELECT 1 FROM {{table}}_blocked b
          WHERE b.part = o.part AND b.aggregate_type = o.aggregate_type AND b.aggregate_id = o.aggregate_id
            AND b.seq < o.seq AND (b.dead OR b.until > p_now)
      )
      AND NOT EXISTS (
          SELECT 1 FROM {{table}} e
          WHERE e.state = 0 AND e.aggregate_type = o.aggregate_type AND e.aggregate_id = o.aggregate_id
            AND e.seq <= p_after
      )
    ORDER BY o.seq
    LIMIT p_limit;
END
$read$
