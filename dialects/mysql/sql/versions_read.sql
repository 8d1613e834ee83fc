-- The recorded migrations: version and name (Migrate renumbers by name).
SELECT version, name FROM {{table}}_migrations
