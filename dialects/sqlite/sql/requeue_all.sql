-- As requeue_ids.sql for every dead row.
UPDATE {{table}} SET state = 0, attempts = 0, next_attempt_at = MIN(@now, created_at)
WHERE state = 2
RETURNING seq
