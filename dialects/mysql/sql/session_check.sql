-- On the session's connection (an answer proves it alive): the partitions
-- the token owns whose lock this connection holds. Args: token, partition
-- prefix.
SELECT part FROM {{table}}_partitions
WHERE owner = ? AND IS_USED_LOCK(CONCAT(?, part)) = CONNECTION_ID()
