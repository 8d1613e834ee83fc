-- A row when the outbox table exists (made before versioned migrations).
SELECT 1 FROM information_schema.tables
WHERE table_schema = COALESCE(NULLIF(split_part('{{table}}', '.', -2), ''), current_schema())
  AND table_name = split_part('{{table}}', '.', -1)
