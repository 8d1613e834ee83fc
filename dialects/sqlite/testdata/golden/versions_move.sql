-- table: outbox
UPDATE outbox_migrations SET version = ?1 WHERE version = ?2
-- table: jit_outbox
UPDATE jit_outbox_migrations SET version = ?1 WHERE version = ?2
