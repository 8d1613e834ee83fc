-- Like claim_select.sql, restricted to event ids; {{ids}} expands to one ?
-- per id. Args: ids..., now, now, now, now, ids..., limit.
SELECT o.seq, o.id, o.aggregate_type, o.aggregate_id, o.event_type, o.payload, o.content_type, o.headers, o.idempotency_key, o.critical, o.created_at, o.attempts
FROM {{table}} o
WHERE o.id IN ({{ids}})
  AND o.state = 0
  AND o.next_attempt_at <= ?
  AND (o.locked_until IS NULL OR o.locked_until <= ?)
  AND NOT EXISTS (
      SELECT 1 FROM {{table}} e
      WHERE e.aggregate_type = o.aggregate_type
        AND e.aggregate_id = o.aggregate_id
        AND e.state = 0
        AND e.seq < o.seq
        AND (e.locked_until > ? OR e.next_attempt_at > ? OR e.id NOT IN ({{ids}}))
  )
ORDER BY o.seq
LIMIT ?
