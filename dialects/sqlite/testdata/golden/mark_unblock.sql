-- table: outbox
DELETE FROM outbox_blocked
WHERE seq IN (SELECT value FROM json_each(?1)) AND NOT dead
  AND part IN (SELECT p.part FROM outbox_partitions p WHERE p.owner = ?2)
-- table: jit_outbox
DELETE FROM jit_outbox_blocked
WHERE seq IN (SELECT value FROM json_each(?1)) AND NOT dead
  AND part IN (SELECT p.part FROM jit_outbox_partitions p WHERE p.owner = ?2)
