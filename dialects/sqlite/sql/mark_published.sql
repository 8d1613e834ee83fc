-- ?1 published at, ?2 JSON array of seqs, ?3 owner. locked_by is kept as a
-- record of which relay published the row.
UPDATE {{table}} SET state = 1, published_at = ?1, locked_until = NULL
WHERE seq IN (SELECT value FROM json_each(?2)) AND locked_by = ?3 AND state = 0
