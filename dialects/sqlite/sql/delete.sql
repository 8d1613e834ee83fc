-- ?1 JSON array of seqs, ?2 owner.
DELETE FROM {{table}} WHERE seq IN (SELECT value FROM json_each(?1)) AND locked_by = ?2 AND state = 0
