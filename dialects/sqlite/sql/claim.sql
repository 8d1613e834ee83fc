-- ?1 owner, ?2 lease until, ?3 now, ?4 limit. One statement: SQLite has a
-- single writer, so the eligibility check and the lease are atomic.
UPDATE {{table}} SET locked_by = ?1, locked_until = ?2
WHERE seq IN (
    SELECT o.seq FROM {{table}} o
    WHERE o.state = 0
      AND o.next_attempt_at <= ?3
      AND (o.locked_until IS NULL OR o.locked_until <= ?3)
      AND NOT EXISTS (
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
