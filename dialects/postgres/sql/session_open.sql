-- Registers relay @name's session @token at @now and takes its member lock
-- (namespace @member_ns, the row's id) in the same statement, on the
-- session's own connection: the row is never visible without its lock
-- held. Returns the id.
WITH r AS (
    INSERT INTO {{table}}_relays (token, name, started_at) VALUES (@token, @name, @now) RETURNING id
)
SELECT r.id, pg_advisory_lock(@member_ns::int, (r.id % {{member_key_mod}})::int) FROM r
