-- A relay's read of its partitions @parts (an int array literal): pending
-- rows due at @now past @after, up to @limit, leaving out blocked
-- aggregates, and for a read ahead (@after > 0) the rows above @horizon
-- that an earlier pending row of their aggregate holds back. The statement
-- lives in {{table}}_read_v2 (sql/functions/read_v2.sql):
-- prepared once, planned to walk the pending rows in seq order; its rows
-- end with the read's horizon.
SELECT * FROM {{table}}_read_v2(@parts, @after, @horizon, @now, @limit)
