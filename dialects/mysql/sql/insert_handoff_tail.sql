-- RETURNING tail of insert.sql for the hand-over on MariaDB; which rows are
-- free comes from insert_handoff_busy.sql.
RETURNING seq, id, TRUE
