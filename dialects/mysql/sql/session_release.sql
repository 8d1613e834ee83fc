-- Gives up partitions @token owns, before session_unlock.sql frees the locks.
UPDATE {{table}}_partitions SET owner = NULL WHERE owner = @token AND part IN (@parts...)
