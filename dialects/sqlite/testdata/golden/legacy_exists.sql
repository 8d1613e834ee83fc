-- table: outbox
SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'outbox'
-- table: jit_outbox
SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'jit_outbox'
