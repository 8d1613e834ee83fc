-- Renumbers a recorded migration: new version, recorded version.
UPDATE {{table}}_migrations SET version = ? WHERE version = ?
