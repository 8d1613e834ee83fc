-- Gives up partitions @token owns.
UPDATE {{table}}_partitions SET owner = NULL, expires_at = NULL
WHERE part IN (SELECT value FROM json_each(@parts)) AND owner = @token
