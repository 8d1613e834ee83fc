-- table: outbox
DELETE FROM outbox_relays
WHERE expires_at < ?1
  AND NOT EXISTS (SELECT 1 FROM outbox_partitions p
                  WHERE p.owner = outbox_relays.token AND p.expires_at > ?2)
-- table: jit_outbox
DELETE FROM jit_outbox_relays
WHERE expires_at < ?1
  AND NOT EXISTS (SELECT 1 FROM jit_outbox_partitions p
                  WHERE p.owner = jit_outbox_relays.token AND p.expires_at > ?2)
