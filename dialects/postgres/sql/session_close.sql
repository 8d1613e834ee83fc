-- Ends a session on its connection: clears its partitions, deletes its
-- relay row, frees the connection's advisory locks.
WITH u AS (
    UPDATE {{table}}_partitions SET owner = NULL WHERE owner = @token RETURNING 1
), d AS (
    DELETE FROM {{table}}_relays WHERE token = @token
)
SELECT pg_advisory_unlock_all()
