-- The applied migrations. applied_at is written by the shared migrator as
-- a time value (text), not as unix microseconds like the outbox's times.
CREATE TABLE IF NOT EXISTS {{table}}_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at TEXT NOT NULL
)
