-- ?1 now, ?2 JSON array of event ids.
UPDATE {{table}} SET state = 0, attempts = 0, next_attempt_at = ?1, locked_by = NULL, locked_until = NULL
WHERE state = 2 AND id IN (SELECT value FROM json_each(?2))
