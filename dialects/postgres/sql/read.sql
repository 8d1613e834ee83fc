-- A relay's read of its partitions; the statement lives in read_v4.sql.
SELECT * FROM {{table}}_read_v4(@parts, @after, @horizon, @now, @limit)
