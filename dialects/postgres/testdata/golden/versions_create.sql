-- table: outbox
CREATE TABLE IF NOT EXISTS outbox_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL
)
-- table: app.jit_outbox
CREATE TABLE IF NOT EXISTS app.jit_outbox_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL
)
