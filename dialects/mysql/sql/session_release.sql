-- Gives up partitions @token owns, before session_unlock.sql frees the locks.
-- FORCE INDEX locks only those rows (see session_own.sql).
UPDATE {{table}}_partitions FORCE INDEX (PRIMARY) SET owner = NULL WHERE owner = @token AND part IN (@parts...)
