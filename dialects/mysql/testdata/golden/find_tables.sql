-- table: outbox
SELECT t.table_schema, t.table_name
FROM information_schema.tables t
JOIN information_schema.tables m
  ON m.table_schema = t.table_schema
 AND CAST(m.table_name AS BINARY) = CAST(CONCAT(t.table_name, '_migrations') AS BINARY)
WHERE t.table_type = 'BASE TABLE'
  AND (CAST(t.table_schema AS BINARY) LIKE CAST(? AS BINARY) ESCAPE '!'
       OR (? IS NULL AND t.table_schema = DATABASE()))
  AND CAST(t.table_name AS BINARY) LIKE CAST(? AS BINARY) ESCAPE '!'
-- table: app.jit_outbox
SELECT t.table_schema, t.table_name
FROM information_schema.tables t
JOIN information_schema.tables m
  ON m.table_schema = t.table_schema
 AND CAST(m.table_name AS BINARY) = CAST(CONCAT(t.table_name, '_migrations') AS BINARY)
WHERE t.table_type = 'BASE TABLE'
  AND (CAST(t.table_schema AS BINARY) LIKE CAST(? AS BINARY) ESCAPE '!'
       OR (? IS NULL AND t.table_schema = DATABASE()))
  AND CAST(t.table_name AS BINARY) LIKE CAST(? AS BINARY) ESCAPE '!'
