-- Frees the partition locks of @parts this connection holds.
SELECT part, RELEASE_LOCK(CONCAT(@part_prefix, part))
FROM {{table}}_partitions
WHERE part IN (@parts...) AND IS_USED_LOCK(CONCAT(@part_prefix, part)) = CONNECTION_ID()
