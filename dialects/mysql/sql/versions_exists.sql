-- Whether <table>_migrations exists: PendingMigrations reads without
-- creating it.
SELECT 1 FROM information_schema.tables
WHERE table_schema = IF(LOCATE('.', '{{table}}') > 0, SUBSTRING_INDEX('{{table}}', '.', 1), DATABASE())
  AND table_name = '{{name}}_migrations'
