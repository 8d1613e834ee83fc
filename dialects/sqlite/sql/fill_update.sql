-- Migration 002: ?1 partition, ?2 JSON array of seqs.
UPDATE {{table}} SET part = ?1 WHERE seq IN (SELECT value FROM json_each(?2))
