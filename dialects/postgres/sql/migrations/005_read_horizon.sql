-- The relay's read with a horizon. A read from the start (p_after = 0)
-- also returns the highest seq it saw committed (max(seq), any state: the
-- primary key's last visible entry, in the read's snapshot). A read ahead
-- (p_after > 0) of the same chain passes it back as p_horizon: a candidate
-- at or below it took its seq before the read from the start, so an
-- earlier row of its aggregate that committed before it was visible to
-- that read, which returned it (no horizon when a block of the partitions
-- existed: it may go mid-chain, and the rows behind it were not read); the
-- relay holds back the aggregates it skipped. Only candidates above the horizon (rows
-- that took their seq after the read from the start) are probed in
-- aggregate_idx for an earlier pending row (a lower seq committing late).
-- The probe walks every index entry of the aggregate at or below p_after,
-- the published rows' dead entries included until vacuum, so in a drain
-- of a backlog it was the largest part of the database's work per event.
--
-- The planner settings: see sql/functions/read_v2.sql. Relays of this
-- version call {{table}}_read_v2 (that file, the same body); this one stays
-- for the previous release's relays until a later release's migration
-- drops it (docs/schema.md). The four-argument {{table}}_read that 002 made
-- before this version is called by no release still supported; a new table
-- is not given it.
CREATE OR REPLACE FUNCTION {{table}}_read(p_parts TEXT, p_after BIGINT, p_horizon BIGINT, p_now TIMESTAMPTZ, p_limit INTEGER)
RETURNS TABLE (seq BIGINT, id TEXT, aggregate_type TEXT, aggregate_id TEXT, event_type TEXT, payload BYTEA,
               content_type TEXT, headers TEXT, idempotency_key TEXT, critical BOOLEAN, created_at TIMESTAMPTZ,
               attempts INTEGER, part INTEGER, payload_json TEXT, horizon BIGINT)
LANGUAGE plpgsql VOLATILE
AS $read$
DECLARE
    v_parts INTEGER[] := p_parts::int[];
BEGIN
    PERFORM set_config('enable_sort', 'off', true);
    PERFORM set_config('enable_bitmapscan', 'off', true);
    PERFORM set_config('jit', 'off', true);
    IF p_after = 0 THEN
        -- The horizon is a scalar subquery of the same statement: the
        -- same snapshot as the rows. No horizon (0) when a block of these
        -- partitions exists: it may go while reads ahead run (a retry's
        -- time passes, an operator skips or requeues a dead row), and the
        -- rows it held back were not read.
        RETURN QUERY
        SELECT o.seq, o.id::text, o.aggregate_type, o.aggregate_id, o.event_type, o.payload, o.content_type,
               o.headers::text, o.idempotency_key, o.critical, o.created_at, o.attempts, o.part, o.payload_json::text,
               CASE WHEN EXISTS (SELECT 1 FROM {{table}}_blocked k WHERE k.part = ANY (v_parts)) THEN 0::bigint
                    ELSE (SELECT max(h.seq) FROM {{table}} h) END
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
    -- A window of 4 x p_limit candidates past p_after: when the probe
    -- leaves out most candidates, an unbounded look would walk the whole
    -- backlog to return nothing. A short or empty result is followed by a
    -- read from the start.
    RETURN QUERY
    SELECT o.seq, o.id::text, o.aggregate_type, o.aggregate_id, o.event_type, o.payload, o.content_type,
           o.headers::text, o.idempotency_key, o.critical, o.created_at, o.attempts, o.part, o.payload_json::text,
           0::bigint
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
      AND (o.seq <= p_horizon OR NOT EXISTS (
          SELECT 1 FROM {{table}} e
          WHERE e.state = 0 AND e.aggregate_type = o.aggregate_type AND e.aggregate_id = o.aggregate_id
            AND e.seq <= p_after
      ))
    ORDER BY o.seq
    LIMIT p_limit;
END
$read$
