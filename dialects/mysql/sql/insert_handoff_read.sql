-- The hand-over on MySQL 8, which has no INSERT ... RETURNING: the inserted
-- rows, read back in the same transaction.
SELECT seq, id, TRUE FROM {{table}} WHERE id IN (@ids...)
