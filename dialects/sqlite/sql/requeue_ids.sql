-- The dead rows of events @ids (a JSON array) back to pending with attempts
-- reset, so each is published before the later rows of its aggregate;
-- requeue_unblock.sql then removes their blocks. Returns the seqs.
-- next_attempt_at goes back to the row's creation, never later than @now:
-- a requeued row that a relay's clock saw as not yet due, with its block
-- gone, would let the later rows of its aggregate pass it.
UPDATE {{table}} SET state = 0, attempts = 0, next_attempt_at = MIN(@now, created_at)
WHERE state = 2 AND id IN (SELECT value FROM json_each(@ids))
RETURNING seq
