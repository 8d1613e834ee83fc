-- Like claim_select.sql for a speculative claim (ClaimRequest.Window): only
-- the first `window` rows that are due and not leased are examined, so a
-- scan that refuses row after row (all held back behind leases) stays
-- bounded. Args: now, now, window, now, now, limit.
SELECT o.seq, o.id, o.aggregate_type, o.aggregate_id, o.event_type, o.payload, o.content_type, o.headers, o.idempotency_key, o.critical, o.created_at, o.attempts
FROM (
    SELECT w.seq FROM {{table}} w
    WHERE w.state = 0
      AND w.next_attempt_at <= ?
      AND (w.locked_until IS NULL OR w.locked_until <= ?)
    ORDER BY w.seq
    LIMIT ?
) c
JOIN {{table}} o ON o.seq = c.seq
WHERE NOT EXISTS (
      SELECT 1 FROM {{table}} e
      WHERE e.aggregate_type = o.aggregate_type
        AND e.aggregate_id = o.aggregate_id
        AND e.state = 0
        AND e.seq < o.seq
        AND (e.locked_until > ? OR e.next_attempt_at > ?)
  )
ORDER BY o.seq
LIMIT ?
