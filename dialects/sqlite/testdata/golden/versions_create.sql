-- table: outbox
CREATE TABLE IF NOT EXISTS outbox_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at TEXT NOT NULL
)
-- table: jit_outbox
CREATE TABLE IF NOT EXISTS jit_outbox_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at TEXT NOT NULL
)
