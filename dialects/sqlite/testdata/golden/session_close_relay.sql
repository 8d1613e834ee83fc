-- table: outbox
DELETE FROM outbox_relays WHERE token = ?1
-- table: jit_outbox
DELETE FROM jit_outbox_relays WHERE token = ?1
