-- Marks published at @at the rows of @seqs in partitions @token owns.
UPDATE {{table}} t JOIN {{table}}_partitions p ON p.part = t.part
SET t.state = 1, t.published_at = @at
WHERE t.seq IN (@seqs...) AND t.state = 0 AND p.owner = @token
