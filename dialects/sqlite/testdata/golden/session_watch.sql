-- table: outbox
SELECT token FROM outbox_relays r
WHERE r.expires_at > ?1
   OR EXISTS (SELECT 1 FROM outbox_partitions p WHERE p.owner = r.token AND p.expires_at > ?1)
-- table: jit_outbox
SELECT token FROM jit_outbox_relays r
WHERE r.expires_at > ?1
   OR EXISTS (SELECT 1 FROM jit_outbox_partitions p WHERE p.owner = r.token AND p.expires_at > ?1)
