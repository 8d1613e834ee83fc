-- Tail of a multi-row INSERT (insert.sql) for the hand-over on MariaDB
-- (10.5+): the (seq, id, free) rows of the inserted events; the dialect
-- decides which are free from insert_handoff_busy.sql.
RETURNING seq, id, TRUE
