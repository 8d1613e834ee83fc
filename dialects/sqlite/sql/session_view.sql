-- Live relay sessions (lease running at ?1) and every partition's owner.
-- Rows: kind 'r' (token) or 'p' (partition, owner, epoch, whether the
-- owner's lease runs at ?1).
SELECT 'r', 0, token, 0, 1 FROM {{table}}_relays WHERE expires_at > ?1
UNION ALL
SELECT 'p', part, COALESCE(owner, ''), epoch, owner IS NOT NULL AND expires_at > ?1
FROM {{table}}_partitions
