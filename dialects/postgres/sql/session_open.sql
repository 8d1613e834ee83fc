-- Registers a session and takes its member lock in one statement, on the
-- session's connection: the row is never visible without its lock.
WITH r AS (
    INSERT INTO {{table}}_relays (token, name, started_at) VALUES (@token, @name, @now) RETURNING id
)
SELECT r.id, pg_advisory_lock(@member_ns::int, (r.id % {{member_key_mod}})::int) FROM r
