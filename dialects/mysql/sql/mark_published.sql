-- Args: published at, seqs..., owner. locked_by is kept as a record of which
-- relay published the row.
UPDATE {{table}} SET state = 1, published_at = ?, locked_until = NULL
WHERE seq IN ({{seqs}}) AND locked_by = ? AND state = 0
