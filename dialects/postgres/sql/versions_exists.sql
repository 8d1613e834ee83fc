-- Whether <table>_migrations exists: PendingMigrations reads without
-- creating it.
SELECT 1 WHERE to_regclass('{{table}}_migrations') IS NOT NULL
