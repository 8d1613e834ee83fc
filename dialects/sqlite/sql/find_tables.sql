-- The outbox tables (FindTables) of the file whose name matches the LIKE
-- pattern @table, escape character '!', ignoring ASCII case as SQLite
-- resolves names: the tables that have a <table>_migrations table beside
-- them (Migrate made them), which no side table has. No schema: '' first.
SELECT '', t.name
FROM sqlite_schema t
WHERE t.type = 'table'
  AND t.name LIKE @table ESCAPE '!'
  AND EXISTS (
      SELECT 1 FROM sqlite_schema m
      WHERE m.type = 'table' AND lower(m.name) = lower(t.name || '_migrations')
  )
