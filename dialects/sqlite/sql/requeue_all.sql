-- As requeue_ids.sql for every dead row.
-- next_attempt_at goes back to the row's creation, never later than now:
-- a requeued row that a relay's clock saw as not yet due, with its block
-- gone, would let the later rows of its aggregate pass it.
UPDATE {{table}} SET state = 0, attempts = 0, next_attempt_at = MIN(@now, created_at)
WHERE state = 2
RETURNING seq
