-- Ends a session on its connection: clears its partitions' owner, deletes
-- its relay row, frees every advisory lock the connection holds. $1 token.
WITH u AS (
    UPDATE {{table}}_partitions SET owner = NULL WHERE owner = $1 RETURNING 1
), d AS (
    DELETE FROM {{table}}_relays WHERE token = $1
)
SELECT pg_advisory_unlock_all()
