-- A relay's read of its partitions; the statement lives in read_v3.sql.
SELECT * FROM {{table}}_read_v3(@parts, @after, @horizon, @now, @limit)
