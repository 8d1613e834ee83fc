-- Registers a relay session and takes its member lock (namespace $1, the
-- row's id) in the same statement, on the session's own connection: the
-- row is never visible without its lock held. $1 member namespace, $2
-- token, $3 relay name, $4 now. Returns the id.
WITH r AS (
    INSERT INTO {{table}}_relays (token, name, started_at) VALUES ($2, $3, $4) RETURNING id
)
SELECT r.id, pg_advisory_lock($1::int, (r.id % 2147483647)::int) FROM r
