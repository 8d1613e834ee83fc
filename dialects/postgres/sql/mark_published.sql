-- $1 published at, $2 array literal of seqs, $3 owner. locked_by is kept as a
-- record of which relay published the row. The statement lives in
-- {{table}}_mark (schema.sql): prepared once, no wait for the WAL flush.
SELECT {{table}}_mark($2, $3, $1)
