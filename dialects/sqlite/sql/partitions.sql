-- The table's partition count and schema version: fails (no such table)
-- on a table that Migrate has not brought to version 2.
SELECT m.partitions, (SELECT MAX(version) FROM {{table}}_migrations) FROM {{table}}_meta m
