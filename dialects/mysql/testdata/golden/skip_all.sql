-- table: outbox
DELETE FROM outbox_blocked WHERE dead
-- table: app.jit_outbox
DELETE FROM app.jit_outbox_blocked WHERE dead
