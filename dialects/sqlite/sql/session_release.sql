-- Gives up partitions ?1 (JSON array) owned by token ?2.
UPDATE {{table}}_partitions SET owner = NULL, expires_at = NULL
WHERE part IN (SELECT value FROM json_each(?1)) AND owner = ?2
