-- The dead rows of events @ids back to pending, so each is published
-- before the later rows of its aggregate (run after skip_ids.sql, in one
-- transaction).
-- next_attempt_at goes back to the row's creation, never later than @now:
-- a requeued row that a relay's clock saw as not yet due, with its block
-- gone, would let the later rows of its aggregate pass it.
UPDATE {{table}} SET state = 0, attempts = 0, next_attempt_at = LEAST(@now, created_at)
WHERE state = 2 AND id IN (@ids...)
