-- Partition count, schema version and server version (MariaDB has INSERT
-- ... RETURNING); fails on a table below version 2.
SELECT m.partitions, (SELECT MAX(version) FROM {{table}}_migrations), VERSION() FROM {{table}}_meta m
