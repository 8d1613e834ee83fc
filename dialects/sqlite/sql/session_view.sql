-- Live relay sessions and every partition's owner, at @now. A session is
-- live while its relay row's lease runs or while it owns a partition whose
-- lease runs (an owning session renews only those).
-- Rows: kind 'r' (token) or 'p' (partition, owner, epoch, whether the
-- owner's lease runs at @now).
SELECT 'r', 0, token, 0, 1 FROM {{table}}_relays r
WHERE r.expires_at > @now
   OR EXISTS (SELECT 1 FROM {{table}}_partitions p WHERE p.owner = r.token AND p.expires_at > @now)
UNION ALL
SELECT 'p', part, COALESCE(owner, ''), epoch, owner IS NOT NULL AND expires_at > @now
FROM {{table}}_partitions
