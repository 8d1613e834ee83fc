-- table: outbox
SELECT 1 FROM information_schema.tables
WHERE table_schema = COALESCE(NULLIF(split_part('outbox', '.', -2), ''), current_schema())
  AND table_name = split_part('outbox', '.', -1)
-- table: app.jit_outbox
SELECT 1 FROM information_schema.tables
WHERE table_schema = COALESCE(NULLIF(split_part('app.jit_outbox', '.', -2), ''), current_schema())
  AND table_name = split_part('app.jit_outbox', '.', -1)
