-- Dead rows back to pending (after requeue_block_ids.sql, in one
-- transaction): each is published before the later rows of its aggregate,
-- whichever read finds them, since its block stays until it is published.
-- attempts = 1: the dead-lettering counts as the row's first attempt,
-- which is also what makes the relay remove the block. next_attempt_at
-- goes back to the row's creation, never later than now: due at once,
-- whatever the relay's clock. {{ids}} expands to one ? per event id.
-- Args: now, ids...
UPDATE {{table}} SET state = 0, attempts = 1, next_attempt_at = LEAST(?, created_at)
WHERE state = 2 AND id IN ({{ids}})
