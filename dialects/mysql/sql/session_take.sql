-- Tries each partition's lock on the session's connection: ownership dies
-- with it. 0 when already held by this connection too: GET_LOCK counts, and
-- one RELEASE_LOCK would not free a lock taken twice.
SELECT part,
       CASE WHEN IS_USED_LOCK(CONCAT(@part_prefix, part)) = CONNECTION_ID() THEN 0
            ELSE GET_LOCK(CONCAT(@part_prefix, part), 0) END
FROM {{table}}_partitions
WHERE part IN (@parts...)
