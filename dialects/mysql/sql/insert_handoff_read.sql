-- The hand-over on MySQL 8 (no INSERT ... RETURNING): after the INSERT, in
-- the same transaction, the (seq, id, free) rows of the inserted events
-- @ids.
SELECT seq, id, TRUE FROM {{table}} WHERE id IN (@ids...)
