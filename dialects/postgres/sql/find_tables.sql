-- The outbox tables (FindTables) whose schema and name match the LIKE
-- patterns @schema (NULL: the current schema) and @table, escape character
-- '!': the tables that have a <table>_migrations table beside them (Migrate
-- made them), which no side table has. One read of the catalog.
SELECT n.nspname, c.relname
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p')
  AND (n.nspname LIKE @schema ESCAPE '!' OR (@schema IS NULL AND n.nspname = current_schema()))
  AND c.relname LIKE @table ESCAPE '!'
  AND EXISTS (
      SELECT 1 FROM pg_catalog.pg_class m
      WHERE m.relnamespace = c.relnamespace AND m.relname = c.relname || '_migrations' AND m.relkind IN ('r', 'p')
  )
