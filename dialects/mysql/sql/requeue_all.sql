-- As requeue_ids.sql for every dead row. Args: now.
UPDATE {{table}} SET state = 0, attempts = 1, next_attempt_at = LEAST(?, created_at)
WHERE state = 2
