-- Dead rows back to pending; requeue_unblock.sql then removes their blocks.
-- next_attempt_at goes back to created_at, never past @now: a row a relay's
-- clock saw as not yet due, with its block gone, would let later rows pass.
UPDATE {{table}} SET state = 0, attempts = 0, next_attempt_at = MIN(@now, created_at)
WHERE state = 2 AND id IN (SELECT value FROM json_each(@ids))
RETURNING seq
