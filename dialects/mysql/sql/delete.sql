-- Deletes the published rows of @seqs in partitions @token owns
-- (Mark.Delete).
DELETE t FROM {{table}} t JOIN {{table}}_partitions p ON p.part = t.part
WHERE t.seq IN (@seqs...) AND t.state = 0 AND p.owner = @token
