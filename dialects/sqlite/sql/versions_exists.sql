-- Whether <table>_migrations exists: PendingMigrations reads without
-- creating it.
SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '{{table}}_migrations'
