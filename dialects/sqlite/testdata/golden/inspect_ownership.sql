-- table: outbox
SELECT 'r', id, token, name, started_at, 0, 1 FROM outbox_relays r
WHERE r.expires_at > ?1
   OR EXISTS (SELECT 1 FROM outbox_partitions p WHERE p.owner = r.token AND p.expires_at > ?1)
UNION ALL
SELECT 'p', part, COALESCE(owner, ''), '', taken_at, epoch, owner IS NOT NULL AND expires_at > ?1
FROM outbox_partitions
-- table: jit_outbox
SELECT 'r', id, token, name, started_at, 0, 1 FROM jit_outbox_relays r
WHERE r.expires_at > ?1
   OR EXISTS (SELECT 1 FROM jit_outbox_partitions p WHERE p.owner = r.token AND p.expires_at > ?1)
UNION ALL
SELECT 'p', part, COALESCE(owner, ''), '', taken_at, epoch, owner IS NOT NULL AND expires_at > ?1
FROM jit_outbox_partitions
