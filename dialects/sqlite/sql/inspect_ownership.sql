-- For operators (Inspector.Ownership): the live relay sessions and every
-- partition's owner at ?1, read without a session. A session is live while
-- its relay row's lease runs or while it owns a partition whose lease runs
-- (an owning session renews only those).
-- Rows: kind 'r' (relay id, token, name, started_at, 0, 1) or 'p'
-- (partition, owner, '', taken_at, epoch, whether the owner's lease on the
-- partition runs at ?1).
SELECT 'r', id, token, name, started_at, 0, 1 FROM {{table}}_relays r
WHERE r.expires_at > ?1
   OR EXISTS (SELECT 1 FROM {{table}}_partitions p WHERE p.owner = r.token AND p.expires_at > ?1)
UNION ALL
SELECT 'p', part, COALESCE(owner, ''), '', taken_at, epoch, owner IS NOT NULL AND expires_at > ?1
FROM {{table}}_partitions
