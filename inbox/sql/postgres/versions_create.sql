CREATE TABLE IF NOT EXISTS {{prefix}}_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL
)
