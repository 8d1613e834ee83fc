-- Args: not before (NULL: keep next_attempt_at), seqs..., owner.
UPDATE {{table}}
SET locked_by = NULL, locked_until = NULL, next_attempt_at = COALESCE(?, next_attempt_at)
WHERE seq IN ({{seqs}}) AND locked_by = ? AND state = 0
