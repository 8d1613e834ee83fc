-- Ends a session, first step: clears its partitions' owner. ?1 token.
UPDATE {{table}}_partitions SET owner = NULL, expires_at = NULL WHERE owner = ?1
