-- Args: last error, next attempt at, new state (0 or 2), seq, owner.
UPDATE {{table}}
SET attempts = attempts + 1, last_error = ?, next_attempt_at = ?, state = ?,
    locked_by = NULL, locked_until = NULL
WHERE seq = ? AND locked_by = ? AND state = 0
