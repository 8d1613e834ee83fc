-- Renumbers a recorded migration whose number changed. Args: new version,
-- recorded version.
UPDATE {{table}}_migrations SET version = ? WHERE version = ?
