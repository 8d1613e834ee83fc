-- As requeue_ids.sql for the aggregate @aggregate_type, @aggregate_id.
-- next_attempt_at goes back to the row's creation, never later than now:
-- a requeued row that a relay's clock saw as not yet due, with its block
-- gone, would let the later rows of its aggregate pass it.
UPDATE {{table}} SET state = 0, attempts = 0, next_attempt_at = MIN(@now, created_at)
WHERE state = 2 AND aggregate_type = @aggregate_type AND aggregate_id = @aggregate_id
RETURNING seq
