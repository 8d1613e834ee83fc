-- $1 not before (NULL: keep next_attempt_at), $2 array literal of seqs, $3 owner.
UPDATE {{table}}
SET locked_by = NULL, locked_until = NULL, next_attempt_at = COALESCE($1, next_attempt_at)
WHERE seq = ANY ($2::text::bigint[]) AND locked_by = $3 AND state = 0
