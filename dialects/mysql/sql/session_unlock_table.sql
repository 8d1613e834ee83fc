-- Ends a session, step 3: frees one hold of each lock of the table this
-- connection holds (every partition's, and the session's member lock
-- @member), and no other lock: the connection may be a Locker's, holding
-- the locks of other tables' sessions too. Reads no table, so that it also
-- runs when the outbox table is gone: the partitions are numbered from
-- four base-8 digits, 0 to 4095 (dialects.MaxPartitions - 1). Repeated
-- until it frees none (GET_LOCK counts holds).
WITH d (n) AS (
    SELECT 0 UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3
    UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7
), names (name) AS (
    SELECT CONCAT(@part_prefix, a.n + 8 * b.n + 64 * c.n + 512 * e.n) FROM d a, d b, d c, d e
    UNION ALL
    SELECT @member
)
SELECT COALESCE(SUM(RELEASE_LOCK(name)), 0) FROM names WHERE IS_USED_LOCK(name) = CONNECTION_ID()
