-- Migrate renumbers by name.
SELECT version, name FROM {{prefix}}_migrations
