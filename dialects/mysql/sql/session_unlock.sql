-- Frees the locks of partitions this connection holds. {{parts}} expands
-- to one ? per partition. Args: partition prefix, partitions...,
-- partition prefix.
SELECT part, RELEASE_LOCK(CONCAT(?, part))
FROM {{table}}_partitions
WHERE part IN ({{parts}}) AND IS_USED_LOCK(CONCAT(?, part)) = CONNECTION_ID()
