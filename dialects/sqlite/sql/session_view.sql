-- Live relay sessions and every partition's owner, at ?1. A session is
-- live while its relay row's lease runs or while it owns a partition whose
-- lease runs (an owning session renews only those).
-- Rows: kind 'r' (token) or 'p' (partition, owner, epoch, whether the
-- owner's lease runs at ?1).
SELECT 'r', 0, token, 0, 1 FROM {{table}}_relays r
WHERE r.expires_at > ?1
   OR EXISTS (SELECT 1 FROM {{table}}_partitions p WHERE p.owner = r.token AND p.expires_at > ?1)
UNION ALL
SELECT 'p', part, COALESCE(owner, ''), epoch, owner IS NOT NULL AND expires_at > ?1
FROM {{table}}_partitions
