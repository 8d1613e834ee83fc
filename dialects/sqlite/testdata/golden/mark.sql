-- table: outbox
UPDATE outbox SET state = 1, published_at = ?1
WHERE seq IN (SELECT value FROM json_each(?2)) AND state = 0
  AND part IN (SELECT p.part FROM outbox_partitions p WHERE p.owner = ?3)
-- table: jit_outbox
UPDATE jit_outbox SET state = 1, published_at = ?1
WHERE seq IN (SELECT value FROM json_each(?2)) AND state = 0
  AND part IN (SELECT p.part FROM jit_outbox_partitions p WHERE p.owner = ?3)
