-- Partition count and schema version; fails on a table below version 2.
SELECT m.partitions, (SELECT MAX(version) FROM {{table}}_migrations) FROM {{table}}_meta m
