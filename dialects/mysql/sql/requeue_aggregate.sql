-- As requeue_ids.sql for one aggregate. Args: now, aggregate type, id.
UPDATE {{table}} SET state = 0, attempts = 1, next_attempt_at = LEAST(?, created_at)
WHERE state = 2 AND aggregate_type = ? AND aggregate_id = ?
