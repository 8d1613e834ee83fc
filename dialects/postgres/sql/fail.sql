-- $1 last error, $2 next attempt at, $3 new state (0 or 2), $4 seq, $5 owner.
UPDATE {{table}}
SET attempts = attempts + 1, last_error = $1, next_attempt_at = $2, state = $3,
    locked_by = NULL, locked_until = NULL
WHERE seq = $4 AND locked_by = $5 AND state = 0
