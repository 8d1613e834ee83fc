-- jitoutbox outbox schema for PostgreSQL. JSON payloads (content type
-- application/json, valid UTF-8 JSON) are stored in payload_json (type json
-- keeps the exact text), all others in payload; exactly one is non-null.
CREATE TABLE IF NOT EXISTS {{table}} (
    seq             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id              UUID        NOT NULL UNIQUE,
    aggregate_type  TEXT        NOT NULL,
    aggregate_id    TEXT        NOT NULL,
    event_type      TEXT        NOT NULL,
    payload         BYTEA,
    payload_json    JSON,
    content_type    TEXT        NOT NULL DEFAULT '',
    headers         JSON,
    idempotency_key TEXT,
    critical        BOOLEAN     NOT NULL DEFAULT FALSE,
    created_at      TIMESTAMPTZ NOT NULL,
    state           SMALLINT    NOT NULL DEFAULT 0,
    attempts        INTEGER     NOT NULL DEFAULT 0,
    next_attempt_at TIMESTAMPTZ NOT NULL,
    locked_by       TEXT,
    locked_until    TIMESTAMPTZ,
    last_error      TEXT,
    published_at    TIMESTAMPTZ,
    CONSTRAINT {{name}}_one_payload CHECK ((payload IS NULL) <> (payload_json IS NULL))
) WITH (fillfactor = 50);
-- fillfactor 50: half of each page stays free, so that the lease a claim
-- writes (locked_by, locked_until: no index covers them) is a HOT update,
-- a new row version on the same page with no new index entries, instead of
-- a new version plus an entry in each of the four indexes: a claim on a
-- large backlog costs about half as much, and the table takes twice the
-- pages (figures: bench/results/*-pg-claim-tuning.md). An
-- existing table keeps its fillfactor; ALTER TABLE ... SET (fillfactor = 50)
-- applies it to pages written from then on.
CREATE INDEX IF NOT EXISTS {{name}}_claim_idx ON {{table}} (seq) WHERE state = 0;
CREATE INDEX IF NOT EXISTS {{name}}_aggregate_idx ON {{table}} (aggregate_type, aggregate_id, seq) WHERE state = 0;
CREATE INDEX IF NOT EXISTS {{name}}_cleanup_idx ON {{table}} (published_at) WHERE state = 1;
CREATE TABLE IF NOT EXISTS {{table}}_locks (
    name         TEXT PRIMARY KEY,
    owner        TEXT,
    locked_until TIMESTAMPTZ
);
INSERT INTO {{table}}_locks (name) VALUES ('claim') ON CONFLICT (name) DO NOTHING;
-- The claim, as one function so that a relay claims with ONE autocommit
-- statement instead of BEGIN + lock + claim + COMMIT (5 round trips with
-- lib/pq). Inside a VOLATILE plpgsql function each statement takes a fresh
-- snapshot (READ COMMITTED), so the claim statement, run after the lock row
-- is taken, sees every earlier claim: claims from all relays are serialised,
-- and the per-aggregate rules hold. Per call, transaction-local (set_config
-- with is_local, NOT the function's SET clause: a SET clause restores every
-- setting when the function returns, before the COMMIT, so the claim
-- would wait for the WAL flush after all):
--   synchronous_commit off: the COMMIT does not wait for the WAL flush; a
--     lease lost in a server crash only makes its rows claimable again,
--     which a lease expiry does anyway.
--   enable_sort off for the scan (walk claim_idx in seq order and stop at the
--     LIMIT; without it, on a freshly loaded table the planner fetched and
--     sorted every pending row) and on for the claim by ids (look the ids up
--     by the unique index, then sort the few rows).
--   plan_cache_mode: a custom plan for the scan (a generic plan of it was
--     several times slower on a large backlog), the cached generic plan for the
--     claim by ids (same shape whatever the ids, so planning per call is
--     pure cost).
--   jit off: a claim is a short indexed query; past jit_above_cost JIT
--     compilation cost many times the claim itself.
-- (Figures and the pgbench command: bench/results/*-pg-claim-tuning.md.)
-- The scan claim looks first at the first 2 x p_limit pending rows and
-- applies the hold-back to them in one pass (a window function over the
-- aggregate). The per-candidate check it replaces reads every earlier
-- pending row of the candidate's aggregate: quadratic when a batch holds
-- many rows of few aggregates, and, with a second relay holding every
-- aggregate, a scan of the whole backlog at that price. The one pass makes
-- a claim over few aggregates cost what a claim over many does (figures:
-- bench/results/*-pg-claim-tuning.md). Only when that look was
-- full and leased less than p_limit does the claim scan on past it, per
-- candidate.
-- OFFSET 0 keeps the hold-back check a SubPlan probed per candidate
-- (aggregate_idx); as an anti join the planner chose a Seq Scan of the whole
-- table (O(table) per claim). With p_ids, a row is refused while an earlier
-- pending row of its aggregate is not among the ids. With p_window (a
-- speculative claim, made while the relay's previous batch is still in
-- flight), only the first p_window rows that are due and not leased are
-- examined: a scan refusing row after row (few aggregates, all held back by
-- leases) costs O(p_window), not O(backlog), and may come back short or
-- empty; the relay then claims again without a window.
-- (The five-argument claim of earlier versions is left in place for relays
-- of those versions during a rolling upgrade.)
CREATE OR REPLACE FUNCTION {{table}}_claim(p_owner TEXT, p_lease_until TIMESTAMPTZ, p_now TIMESTAMPTZ, p_limit INTEGER, p_ids TEXT, p_window INTEGER)
RETURNS TABLE (seq BIGINT, id TEXT, aggregate_type TEXT, aggregate_id TEXT, event_type TEXT, payload BYTEA,
               content_type TEXT, headers TEXT, idempotency_key TEXT, critical BOOLEAN, created_at TIMESTAMPTZ,
               attempts INTEGER, payload_json TEXT)
LANGUAGE plpgsql VOLATILE
AS $claim$
DECLARE
    v_ids    UUID[];
    v_seqs   BIGINT[];
    v_seen   INTEGER;
    v_last   BIGINT;
    v_held   JSONB;
    v_leased INTEGER := 0;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    PERFORM set_config('jit', 'off', true);
    PERFORM 1 FROM {{table}}_locks l WHERE l.name = 'claim' FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'jitoutbox: no claim row in {{table}}_locks (run Migrate)';
    END IF;
    IF p_ids IS NULL AND p_window IS NOT NULL THEN
        PERFORM set_config('enable_sort', 'on', true);
        PERFORM set_config('plan_cache_mode', 'force_custom_plan', true);
        RETURN QUERY
        WITH w AS MATERIALIZED (
            SELECT o.seq, o.aggregate_type, o.aggregate_id FROM {{table}} o
            WHERE o.state = 0
              AND o.next_attempt_at <= p_now
              AND (o.locked_until IS NULL OR o.locked_until <= p_now)
            ORDER BY o.seq
            LIMIT p_window
        ), c AS (
            SELECT o.seq FROM w JOIN {{table}} o ON o.seq = w.seq
            WHERE o.state = 0
              AND (o.locked_until IS NULL OR o.locked_until <= p_now)
              AND NOT EXISTS (
                  SELECT 1 FROM {{table}} e
                  WHERE e.state = 0
                    AND e.aggregate_type = w.aggregate_type
                    AND e.aggregate_id = w.aggregate_id
                    AND e.seq < w.seq
                    AND (e.locked_until > p_now OR e.next_attempt_at > p_now)
                  OFFSET 0
              )
            ORDER BY o.seq
            LIMIT p_limit
            FOR UPDATE OF o SKIP LOCKED
        )
        UPDATE {{table}} t SET locked_by = p_owner, locked_until = p_lease_until
        FROM c WHERE t.seq = c.seq
        RETURNING t.seq, t.id::text, t.aggregate_type, t.aggregate_id, t.event_type, t.payload, t.content_type,
                  t.headers::text, t.idempotency_key, t.critical, t.created_at, t.attempts, t.payload_json::text;
    ELSIF p_ids IS NULL THEN
        -- First look: the first 2 x p_limit pending rows in seq order
        -- (leased and backing-off ones included: a complete prefix, so every
        -- row that could hold a candidate back is in it), the hold-back
        -- applied in one pass by a window function, the picks leased by seq.
        PERFORM set_config('enable_sort', 'on', true);
        PERFORM set_config('plan_cache_mode', 'force_custom_plan', true);
        SELECT (array_agg(h.seq ORDER BY h.seq) FILTER (WHERE NOT h.held))[1:p_limit], count(*), max(h.seq),
               jsonb_object_agg(h.aggregate_type || E'\x1f' || h.aggregate_id, TRUE) FILTER (WHERE h.held)
          INTO v_seqs, v_seen, v_last, v_held
        FROM (
            SELECT w.seq, w.aggregate_type, w.aggregate_id,
                   bool_or(w.busy) OVER (PARTITION BY w.aggregate_type, w.aggregate_id ORDER BY w.seq) AS held
            FROM (
                SELECT o.seq, o.aggregate_type, o.aggregate_id,
                       COALESCE(o.locked_until > p_now, FALSE) OR o.next_attempt_at > p_now AS busy
                FROM {{table}} o
                WHERE o.state = 0
                ORDER BY o.seq
                LIMIT 2 * p_limit
            ) w
        ) h;
        v_seqs := COALESCE(v_seqs, '{}');
        IF cardinality(v_seqs) > 0 THEN
            RETURN QUERY
            WITH c AS (
                SELECT o.seq FROM {{table}} o
                WHERE o.seq = ANY (v_seqs)
                  AND o.state = 0
                  AND o.next_attempt_at <= p_now
                  AND (o.locked_until IS NULL OR o.locked_until <= p_now)
                FOR UPDATE OF o SKIP LOCKED
            )
            UPDATE {{table}} t SET locked_by = p_owner, locked_until = p_lease_until
            FROM c WHERE t.seq = c.seq
            RETURNING t.seq, t.id::text, t.aggregate_type, t.aggregate_id, t.event_type, t.payload, t.content_type,
                      t.headers::text, t.idempotency_key, t.critical, t.created_at, t.attempts, t.payload_json::text;
            GET DIAGNOSTICS v_leased = ROW_COUNT;
        END IF;
        -- Done unless the look was full (more rows pending) and leased less
        -- than p_limit: claimable rows may then lie past it, behind
        -- held-back aggregates. Scan on past the look, the hold-back checked
        -- per candidate, and every aggregate the look found held back or
        -- busy held back whole (this statement has a newer snapshot: a row
        -- the look saw held back may be free now, but it stays unclaimed, so
        -- no later row of its aggregate may pass it). The rows just leased
        -- go in the same batch, so they do not hold back later rows of their
        -- aggregates.
        IF v_leased >= p_limit OR v_seen < 2 * p_limit THEN
            RETURN;
        END IF;
        PERFORM set_config('enable_sort', 'off', true);
        RETURN QUERY
        WITH c AS (
            SELECT o.seq FROM {{table}} o
            WHERE o.state = 0
              AND o.seq > v_last
              AND NOT COALESCE(v_held ? (o.aggregate_type || E'\x1f' || o.aggregate_id), FALSE)
              AND o.next_attempt_at <= p_now
              AND (o.locked_until IS NULL OR o.locked_until <= p_now)
              AND NOT EXISTS (
                  SELECT 1 FROM {{table}} e
                  WHERE e.state = 0
                    AND e.aggregate_type = o.aggregate_type
                    AND e.aggregate_id = o.aggregate_id
                    AND e.seq < o.seq
                    AND (e.locked_until > p_now OR e.next_attempt_at > p_now)
                    AND NOT (e.seq = ANY (v_seqs) AND e.locked_by = p_owner)
                  OFFSET 0
              )
            ORDER BY o.seq
            LIMIT p_limit - v_leased
            FOR UPDATE OF o SKIP LOCKED
        )
        UPDATE {{table}} t SET locked_by = p_owner, locked_until = p_lease_until
        FROM c WHERE t.seq = c.seq
        RETURNING t.seq, t.id::text, t.aggregate_type, t.aggregate_id, t.event_type, t.payload, t.content_type,
                  t.headers::text, t.idempotency_key, t.critical, t.created_at, t.attempts, t.payload_json::text;
    ELSE
        PERFORM set_config('enable_sort', 'on', true);
        PERFORM set_config('plan_cache_mode', 'force_generic_plan', true);
        v_ids := p_ids::uuid[];
        RETURN QUERY
        WITH c AS (
            SELECT o.seq FROM {{table}} o
            WHERE o.id = ANY (v_ids)
              AND o.state = 0
              AND o.next_attempt_at <= p_now
              AND (o.locked_until IS NULL OR o.locked_until <= p_now)
              AND NOT EXISTS (
                  SELECT 1 FROM {{table}} e
                  WHERE e.state = 0
                    AND e.aggregate_type = o.aggregate_type
                    AND e.aggregate_id = o.aggregate_id
                    AND e.seq < o.seq
                    AND (e.locked_until > p_now OR e.next_attempt_at > p_now OR NOT (e.id = ANY (v_ids)))
                  OFFSET 0
              )
            ORDER BY o.seq
            LIMIT p_limit
            FOR UPDATE OF o SKIP LOCKED
        )
        UPDATE {{table}} t SET locked_by = p_owner, locked_until = p_lease_until
        FROM c WHERE t.seq = c.seq
        RETURNING t.seq, t.id::text, t.aggregate_type, t.aggregate_id, t.event_type, t.payload, t.content_type,
                  t.headers::text, t.idempotency_key, t.critical, t.created_at, t.attempts, t.payload_json::text;
    END IF;
END
$claim$;
-- Marks (p_at set) or deletes (p_at NULL) the rows of p_seqs (an array
-- literal) that p_owner leased, and returns how many. One prepared statement
-- instead of an unnamed one (lib/pq: two round trips), and, transaction-local,
-- synchronous_commit off: the COMMIT does not wait for the WAL flush. A mark
-- lost in a server crash leaves its rows leased; when the lease expires they
-- are published again, which at-least-once delivery allows (and JetStream's
-- duplicate window drops while it lasts, by Nats-Msg-Id). Figures:
-- bench/results/*-pg-claim-tuning.md.
CREATE OR REPLACE FUNCTION {{table}}_mark(p_seqs TEXT, p_owner TEXT, p_at TIMESTAMPTZ)
RETURNS BIGINT
LANGUAGE plpgsql VOLATILE
AS $mark$
DECLARE
    v_n BIGINT;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    IF p_at IS NULL THEN
        DELETE FROM {{table}} WHERE seq = ANY (p_seqs::bigint[]) AND locked_by = p_owner AND state = 0;
    ELSE
        UPDATE {{table}} SET state = 1, published_at = p_at, locked_until = NULL
        WHERE seq = ANY (p_seqs::bigint[]) AND locked_by = p_owner AND state = 0;
    END IF;
    GET DIAGNOSTICS v_n = ROW_COUNT;
    RETURN v_n;
END
$mark$;
