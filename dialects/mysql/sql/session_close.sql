-- Ends a session on its connection, step 1: clears its partitions' owner.
-- Args: token.
UPDATE {{table}}_partitions SET owner = NULL WHERE owner = ?
