-- $1 partitions (int array literal), $2 after seq, $3 horizon, $4 now,
-- $5 limit. The statement lives in {{table}}_read (migration 005):
-- prepared once, planned to walk the pending rows in seq order; its rows
-- end with the read's horizon.
SELECT * FROM {{table}}_read($1, $2, $3, $4, $5)
