-- Candidates, whole rows, read (non-locking, latest committed data) after
-- claim_lock.sql. The claim returns these rows when the lease update
-- (claim_update.sql) takes every one of them, else reads them back
-- (claim_read.sql).
-- Args: now, now, now, now, limit.
SELECT o.seq, o.id, o.aggregate_type, o.aggregate_id, o.event_type, o.payload, o.content_type, o.headers, o.idempotency_key, o.critical, o.created_at, o.attempts
FROM {{table}} o
WHERE o.state = 0
  AND o.next_attempt_at <= ?
  AND (o.locked_until IS NULL OR o.locked_until <= ?)
  AND NOT EXISTS (
      SELECT 1 FROM {{table}} e
      WHERE e.aggregate_type = o.aggregate_type
        AND e.aggregate_id = o.aggregate_id
        AND e.state = 0
        AND e.seq < o.seq
        AND (e.locked_until > ? OR e.next_attempt_at > ?)
  )
ORDER BY o.seq
LIMIT ?
