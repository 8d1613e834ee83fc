-- $1 array literal of seqs, $2 owner. The statement lives in {{table}}_mark
-- (schema.sql): prepared once, no wait for the WAL flush.
SELECT {{table}}_mark($1, $2, NULL)
