-- table: outbox
SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'outbox_migrations'
-- table: jit_outbox
SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'jit_outbox_migrations'
