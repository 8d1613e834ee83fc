-- Live relay sessions and every partition's owner: kind 'r' or 'p' rows.
WITH live AS (
    SELECT r.id, r.token FROM {{table}}_relays r WHERE IS_USED_LOCK(CONCAT(@member_prefix, r.id)) IS NOT NULL
)
SELECT 'r', live.id, live.token, 0, TRUE FROM live
UNION ALL
SELECT 'p', p.part, COALESCE(p.owner, ''), p.epoch, EXISTS (SELECT 1 FROM live WHERE live.token = p.owner)
FROM {{table}}_partitions p
