-- Deletes published rows of partitions the token owns (Mark.Delete).
-- {{seqs}} expands to one ? per seq. Args: seqs..., token.
DELETE t FROM {{table}} t JOIN {{table}}_partitions p ON p.part = t.part
WHERE t.seq IN ({{seqs}}) AND t.state = 0 AND p.owner = ?
