-- $1 array literal of seqs, $2 owner.
DELETE FROM {{table}} WHERE seq = ANY ($1::text::bigint[]) AND locked_by = $2 AND state = 0
