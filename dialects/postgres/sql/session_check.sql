-- On the session's connection: an answer proves it, and its advisory locks,
-- alive.
SELECT part FROM {{table}}_partitions WHERE owner = @token
