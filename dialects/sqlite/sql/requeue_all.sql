-- As requeue_ids.sql for every dead row. ?1 now.
UPDATE {{table}} SET state = 0, attempts = 1, next_attempt_at = MIN(?1, created_at)
WHERE state = 2
RETURNING seq
