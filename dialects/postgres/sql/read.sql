-- A relay's read of its partitions; the statement lives in read_v5.sql.
SELECT * FROM {{table}}_read_v5(@parts, @after, @horizon, @now, @limit)
