-- Like claim.sql for a speculative claim (ClaimRequest.Window): only the
-- first ?5 rows that are due and not leased are examined, so a scan that
-- refuses row after row (all held back behind leases) stays bounded.
-- ?1 owner, ?2 lease until, ?3 now, ?4 limit, ?5 window.
UPDATE {{table}} SET locked_by = ?1, locked_until = ?2
WHERE seq IN (
    SELECT o.seq FROM (
        SELECT w.seq, w.aggregate_type, w.aggregate_id FROM {{table}} w
        WHERE w.state = 0
          AND w.next_attempt_at <= ?3
          AND (w.locked_until IS NULL OR w.locked_until <= ?3)
        ORDER BY w.seq
        LIMIT ?5
    ) o
    WHERE NOT EXISTS (
          SELECT 1 FROM {{table}} e
          WHERE e.state = 0
            AND e.aggregate_type = o.aggregate_type
            AND e.aggregate_id = o.aggregate_id
            AND e.seq < o.seq
            AND (e.locked_until > ?3 OR e.next_attempt_at > ?3)
      )
    ORDER BY o.seq
    LIMIT ?4
)
RETURNING seq, id, aggregate_type, aggregate_id, event_type, payload, content_type, headers, idempotency_key, critical, created_at, attempts
