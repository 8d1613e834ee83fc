-- As requeue_ids.sql for every dead row. ?1 now.
UPDATE {{table}} SET state = 0, attempts = 0, next_attempt_at = ?1
WHERE state = 2
RETURNING seq
