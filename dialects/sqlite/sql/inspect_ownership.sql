-- For operators (Inspector.Ownership): the live relay sessions (lease
-- running at ?1) and every partition's owner, read without a session.
-- Rows: kind 'r' (relay id, token, name, started_at, 0, 1) or 'p'
-- (partition, owner, '', taken_at, epoch, whether the owner's lease on the
-- partition runs at ?1).
SELECT 'r', id, token, name, started_at, 0, 1 FROM {{table}}_relays WHERE expires_at > ?1
UNION ALL
SELECT 'p', part, COALESCE(owner, ''), '', taken_at, epoch, owner IS NOT NULL AND expires_at > ?1
FROM {{table}}_partitions
