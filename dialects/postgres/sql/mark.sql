-- $1 token, $2 array literal of seqs, $3 array literal of seqs to unblock
-- (NULL for none), $4 published at (NULL: delete). The statements live in
-- {{table}}_mark (migration 002): prepared once, no wait for the WAL flush.
SELECT {{table}}_mark($1, $2, $3, $4)
