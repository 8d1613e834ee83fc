-- On the session's connection (an answer proves it alive): the partitions
-- @token owns whose lock this connection holds.
SELECT part FROM {{table}}_partitions
WHERE owner = @token AND IS_USED_LOCK(CONCAT(@part_prefix, part)) = CONNECTION_ID()
