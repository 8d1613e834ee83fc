-- table: outbox
SELECT 1 FROM information_schema.tables
WHERE table_schema = IF(LOCATE('.', 'outbox') > 0, SUBSTRING_INDEX('outbox', '.', 1), DATABASE())
  AND table_name = 'outbox_migrations'
-- table: app.jit_outbox
SELECT 1 FROM information_schema.tables
WHERE table_schema = IF(LOCATE('.', 'app.jit_outbox') > 0, SUBSTRING_INDEX('app.jit_outbox', '.', 1), DATABASE())
  AND table_name = 'jit_outbox_migrations'
