-- As requeue_ids.sql for one aggregate.
UPDATE {{table}} SET state = 0, attempts = 0, next_attempt_at = MIN(@now, created_at)
WHERE state = 2 AND aggregate_type = @aggregate_type AND aggregate_id = @aggregate_id
RETURNING seq
