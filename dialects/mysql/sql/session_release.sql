-- Gives up the partitions @parts that @token owns: clears the owner,
-- before session_unlock.sql frees their locks.
UPDATE {{table}}_partitions SET owner = NULL WHERE owner = @token AND part IN (@parts...)
