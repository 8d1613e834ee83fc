-- Marks published the rows of @seqs in partitions @token owns.
UPDATE {{table}} SET state = 1, published_at = @at
WHERE seq IN (SELECT value FROM json_each(@seqs)) AND state = 0
  AND part IN (SELECT p.part FROM {{table}}_partitions p WHERE p.owner = @token)
