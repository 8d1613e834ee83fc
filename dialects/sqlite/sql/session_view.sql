-- Live relay sessions and every partition's owner: kind 'r' or 'p' rows.
-- A session is live while its relay lease or a partition lease runs.
SELECT 'r', 0, token, 0, 1 FROM {{table}}_relays r
WHERE r.expires_at > @now
   OR EXISTS (SELECT 1 FROM {{table}}_partitions p WHERE p.owner = r.token AND p.expires_at > @now)
UNION ALL
SELECT 'p', part, COALESCE(owner, ''), epoch, owner IS NOT NULL AND expires_at > @now
FROM {{table}}_partitions
