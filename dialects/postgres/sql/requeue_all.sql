-- $1 now.
UPDATE {{table}} SET state = 0, attempts = 0, next_attempt_at = $1, locked_by = NULL, locked_until = NULL
WHERE state = 2
