-- A relay's read of its partitions; the statement lives in read_v2.sql.
SELECT * FROM {{table}}_read_v2(@parts, @after, @horizon, @now, @limit)
