-- The outbox tables (FindTables) whose database and name match the LIKE
-- patterns @schema (NULL: the current database) and @table, escape
-- character '!', compared byte for byte as MySQL compares table names on
-- Linux: the tables that have a <table>_migrations table beside them
-- (Migrate made them), which no side table has. One read of the catalog.
SELECT t.table_schema, t.table_name
FROM information_schema.tables t
JOIN information_schema.tables m
  ON m.table_schema = t.table_schema
 AND CAST(m.table_name AS BINARY) = CAST(CONCAT(t.table_name, '_migrations') AS BINARY)
WHERE t.table_type = 'BASE TABLE'
  AND (CAST(t.table_schema AS BINARY) LIKE CAST(@schema AS BINARY) ESCAPE '!'
       OR (@schema IS NULL AND t.table_schema = DATABASE()))
  AND CAST(t.table_name AS BINARY) LIKE CAST(@table AS BINARY) ESCAPE '!'
