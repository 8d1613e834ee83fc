-- $1 published at, $2 array literal of seqs, $3 owner. locked_by is kept as a
-- record of which relay published the row.
UPDATE {{table}} SET state = 1, published_at = $1, locked_until = NULL
WHERE seq = ANY ($2::text::bigint[]) AND locked_by = $3 AND state = 0
