-- The table's partition count, schema version and the server's version
-- (to tell MariaDB, which has INSERT ... RETURNING, from MySQL): fails (no
-- such table) on a table that Migrate has not brought to version 2.
SELECT m.partitions, (SELECT MAX(version) FROM {{table}}_migrations), VERSION() FROM {{table}}_meta m
