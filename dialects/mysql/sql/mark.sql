-- Marks published the rows of partitions the token owns. {{seqs}} expands
-- to one ? per seq. Args: published at, seqs..., token.
UPDATE {{table}} t JOIN {{table}}_partitions p ON p.part = t.part
SET t.state = 1, t.published_at = ?
WHERE t.seq IN ({{seqs}}) AND t.state = 0 AND p.owner = ?
