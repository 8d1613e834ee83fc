-- Dead rows back to pending with attempts reset, so each is published
-- before the later rows of its aggregate; requeue_unblock.sql then removes
-- their blocks. Returns the seqs. ?1 now, ?2 JSON array of event ids.
UPDATE {{table}} SET state = 0, attempts = 0, next_attempt_at = ?1
WHERE state = 2 AND id IN (SELECT value FROM json_each(?2))
RETURNING seq
