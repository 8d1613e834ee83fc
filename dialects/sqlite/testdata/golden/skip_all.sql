-- table: outbox
DELETE FROM outbox_blocked WHERE dead
-- table: jit_outbox
DELETE FROM jit_outbox_blocked WHERE dead
