-- Dead rows back to pending, so each is published before the later rows
-- of its aggregate, whichever read finds them: requeue_block.sql then holds
-- their blocks until they are published. attempts = 1: the dead-lettering
-- counts as the row's first attempt, which is also what makes the relay
-- remove the block. next_attempt_at goes back to the row's creation, never
-- later than now: due at once, whatever the relay's clock. Returns the
-- seqs. ?1 now, ?2 JSON array of event ids.
UPDATE {{table}} SET state = 0, attempts = 1, next_attempt_at = MIN(?1, created_at)
WHERE state = 2 AND id IN (SELECT value FROM json_each(?2))
RETURNING seq
