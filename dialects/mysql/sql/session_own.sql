-- Records the session's token as owner of the partitions whose locks it
-- just took (session_take.sql), with a new epoch. {{parts}} expands to one
-- ? per partition. Args: token, now, partitions...
UPDATE {{table}}_partitions SET owner = ?, epoch = epoch + 1, taken_at = ?, expires_at = NULL
WHERE part IN ({{parts}})
