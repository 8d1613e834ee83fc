-- The applied migration versions.
SELECT version FROM {{table}}_migrations
