-- Recorded migrations; Migrate renumbers by name.
SELECT version, name FROM {{table}}_migrations
