-- Ends a session, first step: clears the owner of the partitions of @token.
UPDATE {{table}}_partitions SET owner = NULL, expires_at = NULL WHERE owner = @token
