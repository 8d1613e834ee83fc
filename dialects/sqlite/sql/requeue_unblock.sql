-- Removes the blocks of requeued rows, in the requeue's transaction. ?1
-- JSON array of seqs.
-- next_attempt_at goes back to the row's creation, never later than now:
-- a requeued row that a relay's clock saw as not yet due, with its block
-- gone, would let the later rows of its aggregate pass it.
DELETE FROM {{table}}_blocked WHERE seq IN (SELECT value FROM json_each(?1))
