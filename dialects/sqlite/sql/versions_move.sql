-- Renumbers a recorded migration: ?1 new version, ?2 recorded version.
UPDATE {{table}}_migrations SET version = ?1 WHERE version = ?2
