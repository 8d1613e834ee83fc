-- applied_at is the shared migrator's time text, not unix microseconds.
CREATE TABLE IF NOT EXISTS {{table}}_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at TEXT NOT NULL
)
