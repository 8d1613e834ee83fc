-- ?1 not before (NULL: keep next_attempt_at), ?2 JSON array of seqs, ?3 owner.
UPDATE {{table}}
SET locked_by = NULL, locked_until = NULL, next_attempt_at = COALESCE(?1, next_attempt_at)
WHERE seq IN (SELECT value FROM json_each(?2)) AND locked_by = ?3 AND state = 0
