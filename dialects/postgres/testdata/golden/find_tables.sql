-- table: outbox
SELECT n.nspname, c.relname
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p')
  AND (n.nspname LIKE $1 ESCAPE '!' OR ($1 IS NULL AND n.nspname = current_schema()))
  AND c.relname LIKE $2 ESCAPE '!'
  AND EXISTS (
      SELECT 1 FROM pg_catalog.pg_class m
      WHERE m.relnamespace = c.relnamespace AND m.relname = c.relname || '_migrations' AND m.relkind IN ('r', 'p')
  )
-- table: app.jit_outbox
SELECT n.nspname, c.relname
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p')
  AND (n.nspname LIKE $1 ESCAPE '!' OR ($1 IS NULL AND n.nspname = current_schema()))
  AND c.relname LIKE $2 ESCAPE '!'
  AND EXISTS (
      SELECT 1 FROM pg_catalog.pg_class m
      WHERE m.relnamespace = c.relnamespace AND m.relname = c.relname || '_migrations' AND m.relkind IN ('r', 'p')
  )
