-- Live relay sessions (member lock, named @member_prefix + id, held) and
-- every partition's owner. Rows: kind 'r' (id, token) or 'p' (partition,
-- owner, epoch, whether the owner is a live session).
WITH live AS (
    SELECT r.id, r.token FROM {{table}}_relays r WHERE IS_USED_LOCK(CONCAT(@member_prefix, r.id)) IS NOT NULL
)
SELECT 'r', live.id, live.token, 0, TRUE FROM live
UNION ALL
SELECT 'p', p.part, COALESCE(p.owner, ''), p.epoch, EXISTS (SELECT 1 FROM live WHERE live.token = p.owner)
FROM {{table}}_partitions p
