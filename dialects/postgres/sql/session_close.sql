-- Ends a session, step 1: clears its partitions' owner and deletes its
-- relay row (session_unlock.sql then frees its locks).
WITH u AS (
    UPDATE {{table}}_partitions SET owner = NULL WHERE owner = @token RETURNING 1
)
DELETE FROM {{table}}_relays WHERE token = @token
