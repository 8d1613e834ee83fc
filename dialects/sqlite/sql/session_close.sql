-- Ends a session, step 1: clears its partitions' owner.
UPDATE {{table}}_partitions SET owner = NULL, expires_at = NULL WHERE owner = @token
