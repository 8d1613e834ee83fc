-- Args: seqs..., owner.
DELETE FROM {{table}} WHERE seq IN ({{seqs}}) AND locked_by = ? AND state = 0
