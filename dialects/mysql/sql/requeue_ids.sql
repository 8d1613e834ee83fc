-- Dead rows back to pending (after skip_ids.sql, one transaction).
-- next_attempt_at goes back to created_at, never past @now: a row a relay's
-- clock saw as not yet due, with its block gone, would let later rows pass.
UPDATE {{table}} SET state = 0, attempts = 0, next_attempt_at = LEAST(@now, created_at)
WHERE state = 2 AND id IN (@ids...)
