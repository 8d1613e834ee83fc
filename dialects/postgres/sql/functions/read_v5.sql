-- Installed by every Migrate; a change is a new file and name (read_v6),
-- never an edit (docs/schema.md). read_v4 with one change: a candidate
-- row's probe of <table>_blocked (<table>_held) runs only when its
-- partition has a block (hold) in force. The array of those partitions is
-- an InitPlan, one index look per partition read, evaluated once per read
-- in the read's snapshot, and OR skips the probe for a row of any other
-- partition: the same rows as read_v4. Without blocks and holds, read_v4's
-- two index probes per row were about a third of the database's CPU of a
-- read; a dead block left for an operator now costs only its partition's
-- rows their probes.
-- read_v4: read_v3 with one change: a row never
-- tried and not scheduled (attempts 0, no deliver_at) is due once
-- committed, whatever p_now. It was due at its insert, and p_now, the
-- relay's idea of the database's clock, lags it by up to a round trip: a
-- read right after a commit passed over such a row (left to the next wake
-- or the poll) and could return a later row of its aggregate inserted with
-- a higher seq and an earlier due time by a transaction that started first.
-- read_v3: read_v2 with deliver_at and the holds of
-- scheduled rows (<table>_held, migration 009): a row after an aggregate's
-- held scheduled row waits until the hold's due time; reads ahead use the
-- chain's p_now, so a hold ending mid-chain holds for the whole chain. A plain SELECT; planner settings are set
-- transaction-locally so it walks claim_idx in seq order and stops at the
-- limit instead of sorting a fresh backlog; jit costs more than the read.
-- A read from the start (p_after = 0) also returns its horizon, the highest
-- seq in its snapshot. A read ahead probes aggregate_idx for an earlier
-- pending row only for candidates above p_horizon: rows at or below it had
-- earlier rows visible to that read (docs/guarantees.md).
CREATE OR REPLACE FUNCTION {{table}}_read_v5(p_parts TEXT, p_after BIGINT, p_horizon BIGINT, p_now TIMESTAMPTZ, p_limit INTEGER)
RETURNS TABLE (seq BIGINT, id TEXT, aggregate_type TEXT, aggregate_id TEXT, event_type TEXT, payload BYTEA,
               content_type TEXT, headers TEXT, idempotency_key TEXT, critical BOOLEAN, created_at TIMESTAMPTZ,
               attempts INTEGER, part INTEGER, deliver_at TIMESTAMPTZ, payload_json TEXT, horizon BIGINT)
LANGUAGE plpgsql VOLATILE
AS $read$
DECLARE
    v_parts INTEGER[] := p_parts::int[];
BEGIN
    PERFORM set_config('enable_sort', 'off', true);
    PERFORM set_config('enable_bitmapscan', 'off', true);
    PERFORM set_config('jit', 'off', true);
    IF p_after = 0 THEN
        -- The horizon shares the rows' snapshot. None (0) when a block of these
        -- partitions exists: it may go mid-chain, and the rows it held were not read.
        RETURN QUERY
        SELECT o.seq, o.id::text, o.aggregate_type, o.aggregate_id, o.event_type, o.payload, o.content_type,
               o.headers::text, o.idempotency_key, o.critical, o.created_at, o.attempts, o.part, o.deliver_at, o.payload_json::text,
               CASE WHEN EXISTS (SELECT 1 FROM {{table}}_blocked k WHERE k.part = ANY (v_parts)) THEN 0::bigint
                    ELSE (SELECT max(h.seq) FROM {{table}} h) END
        FROM {{table}} o
        WHERE o.state = 0
          AND o.part = ANY (v_parts)
          AND (o.next_attempt_at <= p_now OR (o.attempts = 0 AND o.deliver_at IS NULL))
          AND (o.part <> ALL (ARRAY(SELECT q FROM unnest(v_parts) q WHERE EXISTS (
                   SELECT 1 FROM {{table}}_blocked g WHERE g.part = q AND (g.dead OR g.until > p_now))))
               OR NOT EXISTS (
              SELECT 1 FROM {{table}}_blocked b
              WHERE b.part = o.part AND b.aggregate_type = o.aggregate_type AND b.aggregate_id = o.aggregate_id
                AND b.seq < o.seq AND (b.dead OR b.until > p_now)
          ))
          AND (o.part <> ALL (ARRAY(SELECT q FROM unnest(v_parts) q WHERE EXISTS (
                   SELECT 1 FROM {{table}}_held g WHERE g.part = q AND g.until > p_now)))
               OR NOT EXISTS (
              SELECT 1 FROM {{table}}_held k
              WHERE k.part = o.part AND k.aggregate_type = o.aggregate_type AND k.aggregate_id = o.aggregate_id
                AND k.seq < o.seq AND k.until > p_now
          ))
        ORDER BY o.seq
        LIMIT p_limit;
        RETURN;
    END IF;
    -- A window of 4 x p_limit: bounds the walk when the probe leaves out most
    -- candidates; a short result is followed by a read from the start.
    RETURN QUERY
    SELECT o.seq, o.id::text, o.aggregate_type, o.aggregate_id, o.event_type, o.payload, o.content_type,
           o.headers::text, o.idempotency_key, o.critical, o.created_at, o.attempts, o.part, o.deliver_at, o.payload_json::text,
           0::bigint
    FROM (
        SELECT w.* FROM {{table}} w
        WHERE w.state = 0
          AND w.part = ANY (v_parts)
          AND w.seq > p_after
          AND (w.next_attempt_at <= p_now OR (w.attempts = 0 AND w.deliver_at IS NULL))
        ORDER BY w.seq
        LIMIT 4 * p_limit
    ) o
    WHERE (o.part <> ALL (ARRAY(SELECT q FROM unnest(v_parts) q WHERE EXISTS (
               SELECT 1 FROM {{table}}_blocked g WHERE g.part = q AND (g.dead OR g.until > p_now))))
           OR NOT EXISTS (
          SELECT 1 FROM {{table}}_blocked b
          WHERE b.part = o.part AND b.aggregate_type = o.aggregate_type AND b.aggregate_id = o.aggregate_id
            AND b.seq < o.seq AND (b.dead OR b.until > p_now)
      ))
      AND (o.part <> ALL (ARRAY(SELECT q FROM unnest(v_parts) q WHERE EXISTS (
               SELECT 1 FROM {{table}}_held g WHERE g.part = q AND g.until > p_now)))
           OR NOT EXISTS (
          SELECT 1 FROM {{table}}_held k
          WHERE k.part = o.part AND k.aggregate_type = o.aggregate_type AND k.aggregate_id = o.aggregate_id
            AND k.seq < o.seq AND k.until > p_now
      ))
      AND (o.seq <= p_horizon OR NOT EXISTS (
          SELECT 1 FROM {{table}} e
          WHERE e.state = 0 AND e.aggregate_type = o.aggregate_type AND e.aggregate_id = o.aggregate_id
            AND e.seq <= p_after
      ))
    ORDER BY o.seq
    LIMIT p_limit;
END
$read$
