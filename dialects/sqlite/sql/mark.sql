-- Marks published the rows of ?2 (JSON array of seqs) in partitions token
-- ?1 owns, at ?3.
UPDATE {{table}} SET state = 1, published_at = ?3
WHERE seq IN (SELECT value FROM json_each(?2)) AND state = 0
  AND part IN (SELECT p.part FROM {{table}}_partitions p WHERE p.owner = ?1)
