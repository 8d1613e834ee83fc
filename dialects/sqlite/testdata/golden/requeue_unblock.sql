-- table: outbox
DELETE FROM outbox_blocked WHERE seq IN (SELECT value FROM json_each(?1))
-- table: jit_outbox
DELETE FROM jit_outbox_blocked WHERE seq IN (SELECT value FROM json_each(?1))
