-- table: outbox
SELECT '', t.name
FROM sqlite_schema t
WHERE t.type = 'table'
  AND t.name LIKE ?1 ESCAPE '!'
  AND EXISTS (
      SELECT 1 FROM sqlite_schema m
      WHERE m.type = 'table' AND lower(m.name) = lower(t.name || '_migrations')
  )
-- table: jit_outbox
SELECT '', t.name
FROM sqlite_schema t
WHERE t.type = 'table'
  AND t.name LIKE ?1 ESCAPE '!'
  AND EXISTS (
      SELECT 1 FROM sqlite_schema m
      WHERE m.type = 'table' AND lower(m.name) = lower(t.name || '_migrations')
  )
