-- Ends a session on its connection: clears its partitions' owner, deletes
-- its relay row, frees every advisory lock the connection holds: the session
-- @token.
WITH u AS (
    UPDATE {{table}}_partitions SET owner = NULL WHERE owner = @token RETURNING 1
), d AS (
    DELETE FROM {{table}}_relays WHERE token = @token
)
SELECT pg_advisory_unlock_all()
