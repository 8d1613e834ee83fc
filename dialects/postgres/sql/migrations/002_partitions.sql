-- Partitions owned by relay sessions (advisory locks on their connections)
-- replace per-row leases; the writer computes each row's part.
ALTER TABLE {{table}} ADD COLUMN IF NOT EXISTS part INTEGER NOT NULL DEFAULT 0;
CREATE TABLE IF NOT EXISTS {{table}}_meta (
    partitions INTEGER NOT NULL CHECK (partitions BETWEEN 1 AND 4096),
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
INSERT INTO {{table}}_meta (partitions) SELECT {{partitions}} WHERE NOT EXISTS (SELECT 1 FROM {{table}}_meta);
-- step: fill-partitions
-- No default: an older writer, which does not know partitions, fails loudly
-- instead of writing rows no relay reads.
ALTER TABLE {{table}} ALTER COLUMN part DROP DEFAULT;
-- No (part, seq) index: the read walks claim_idx in seq order and stops at
-- the limit, which a partition index would turn into a sort.
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
-- A session holds advisory lock (namespace + 1, id) while it lives.
CREATE TABLE IF NOT EXISTS {{table}}_relays (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    token      TEXT NOT NULL UNIQUE,
    name       TEXT NOT NULL,
    started_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ
);
-- Aggregates held back behind a failed row (retry or dead): one row each.
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
INSERT INTO {{table}}_blocked (part, aggregate_type, aggregate_id, seq, dead, until)
SELECT DISTINCT ON (part, aggregate_type, aggregate_id) part, aggregate_type, aggregate_id, seq, FALSE, next_attempt_at
FROM {{table}} WHERE state = 0 AND attempts > 0
ORDER BY part, aggregate_type, aggregate_id, seq
ON CONFLICT DO NOTHING;
-- Dead with partitions: the claim lock row, per-row leases, claim functions.
DELETE FROM {{table}}_locks WHERE name = 'claim';
DROP FUNCTION IF EXISTS {{table}}_claim(TEXT, TIMESTAMPTZ, TIMESTAMPTZ, INTEGER, TEXT, INTEGER);
DROP FUNCTION IF EXISTS {{table}}_claim(TEXT, TIMESTAMPTZ, TIMESTAMPTZ, INTEGER, TEXT);
DROP FUNCTION IF EXISTS {{table}}_mark(TEXT, TEXT, TIMESTAMPTZ);
ALTER TABLE {{table}} DROP COLUMN IF EXISTS locked_by;
ALTER TABLE {{table}} DROP COLUMN IF EXISTS locked_until;
-- Superseded by mark_v2 (functions/mark_v2.sql); kept for older relays until
-- a later release drops it (docs/schema.md).
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
