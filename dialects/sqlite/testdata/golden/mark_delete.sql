-- table: outbox
DELETE FROM outbox
WHERE seq IN (SELECT value FROM json_each(?2)) AND state = 0
  AND part IN (SELECT p.part FROM outbox_partitions p WHERE p.owner = ?1)
-- table: jit_outbox
DELETE FROM jit_outbox
WHERE seq IN (SELECT value FROM json_each(?2)) AND state = 0
  AND part IN (SELECT p.part FROM jit_outbox_partitions p WHERE p.owner = ?1)
