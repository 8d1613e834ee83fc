-- $1 partitions (int array literal), $2 after seq, $3 now, $4 limit. The
-- statement lives in {{table}}_read (migration 002): prepared once, planned
-- to walk the pending rows in seq order.
SELECT * FROM {{table}}_read($1, $2, $3, $4)
