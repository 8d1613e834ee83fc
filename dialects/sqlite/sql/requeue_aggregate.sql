-- As requeue_ids.sql for one aggregate. ?1 now, ?2 aggregate type, ?3 id.
-- next_attempt_at goes back to the row's creation, never later than now:
-- a requeued row that a relay's clock saw as not yet due, with its block
-- gone, would let the later rows of its aggregate pass it.
UPDATE {{table}} SET state = 0, attempts = 0, next_attempt_at = MIN(?1, created_at)
WHERE state = 2 AND aggregate_type = ?2 AND aggregate_id = ?3
RETURNING seq
