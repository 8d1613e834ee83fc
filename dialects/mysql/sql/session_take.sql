-- Tries the lock of each partition of @parts (named @part_prefix +
-- partition)
-- on the session's connection, once per row: 1 when taken, 0 when held
-- by another connection or already by this one (GET_LOCK would count it
-- twice, and one RELEASE_LOCK would not free it; the owner row and epoch
-- stay as they are). The lock is what makes ownership exclusive: it dies
-- with the connection. Returns (partition, taken).
SELECT part,
       CASE WHEN IS_USED_LOCK(CONCAT(@part_prefix, part)) = CONNECTION_ID() THEN 0
            ELSE GET_LOCK(CONCAT(@part_prefix, part), 0) END
FROM {{table}}_partitions
WHERE part IN (@parts...)
