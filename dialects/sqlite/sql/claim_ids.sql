-- Like claim.sql, restricted to the event ids in the JSON array ?5; a row is
-- refused while an earlier pending row of its aggregate is not in ?5.
UPDATE {{table}} SET locked_by = ?1, locked_until = ?2
WHERE seq IN (
    SELECT o.seq FROM {{table}} o
    WHERE o.id IN (SELECT value FROM json_each(?5))
      AND o.state = 0
      AND o.next_attempt_at <= ?3
      AND (o.locked_until IS NULL OR o.locked_until <= ?3)
      AND NOT EXISTS (
          SELECT 1 FROM {{table}} e
          WHERE e.state = 0
            AND e.aggregate_type = o.aggregate_type
            AND e.aggregate_id = o.aggregate_id
            AND e.seq < o.seq
            AND (e.locked_until > ?3 OR e.next_attempt_at > ?3
                 OR e.id NOT IN (SELECT value FROM json_each(?5)))
      )
    ORDER BY o.seq
    LIMIT ?4
)
RETURNING seq, id, aggregate_type, aggregate_id, event_type, payload, content_type, headers, idempotency_key, critical, created_at, attempts
