-- Live relay sessions and every partition's owner, read without a session.
-- A session is live while its relay lease or a partition lease runs (an
-- owning session renews only those). Rows: kind 'r' or 'p'.
SELECT 'r', id, token, name, started_at, 0, 1 FROM {{table}}_relays r
WHERE r.expires_at > @now
   OR EXISTS (SELECT 1 FROM {{table}}_partitions p WHERE p.owner = r.token AND p.expires_at > @now)
UNION ALL
SELECT 'p', part, COALESCE(owner, ''), '', taken_at, epoch, owner IS NOT NULL AND expires_at > @now
FROM {{table}}_partitions
