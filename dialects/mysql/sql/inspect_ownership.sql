-- Live relay sessions (member lock in use) and every partition's owner, read
-- without a session. Rows: kind 'r' (relay) or 'p' (partition).
WITH live AS (
    SELECT r.id, r.token, r.name, r.started_at FROM {{table}}_relays r
    WHERE IS_USED_LOCK(CONCAT(@member_prefix, r.id)) IS NOT NULL
)
SELECT 'r', live.id, live.token, live.name, live.started_at, 0, TRUE FROM live
UNION ALL
SELECT 'p', p.part, COALESCE(p.owner, ''), '', p.taken_at, p.epoch,
       EXISTS (SELECT 1 FROM live WHERE live.token = p.owner)
FROM {{table}}_partitions p
