-- For operators (Inspector.Ownership): the live relay sessions (member lock,
-- named @member_prefix + id, in use) and every partition's owner, read
-- without a session. Rows: kind 'r' (relay id, token,
-- name, started_at, 0, TRUE) or 'p' (partition, owner, '', taken_at, epoch,
-- whether the owner is live).
WITH live AS (
    SELECT r.id, r.token, r.name, r.started_at FROM {{table}}_relays r
    WHERE IS_USED_LOCK(CONCAT(@member_prefix, r.id)) IS NOT NULL
)
SELECT 'r', live.id, live.token, live.name, live.started_at, 0, TRUE FROM live
UNION ALL
SELECT 'p', p.part, COALESCE(p.owner, ''), '', p.taken_at, p.epoch,
       EXISTS (SELECT 1 FROM live WHERE live.token = p.owner)
FROM {{table}}_partitions p
