-- $1 now, $2 aggregate type, $3 aggregate id.
UPDATE {{table}} SET state = 0, attempts = 0, next_attempt_at = $1, locked_by = NULL, locked_until = NULL
WHERE state = 2 AND aggregate_type = $2 AND aggregate_id = $3
