-- table: outbox
DELETE FROM outbox
WHERE seq IN (SELECT value FROM json_each(?1)) AND state = 0
  AND part IN (SELECT p.part FROM outbox_partitions p WHERE p.owner = ?2)
-- table: jit_outbox
DELETE FROM jit_outbox
WHERE seq IN (SELECT value FROM json_each(?1)) AND state = 0
  AND part IN (SELECT p.part FROM jit_outbox_partitions p WHERE p.owner = ?2)
