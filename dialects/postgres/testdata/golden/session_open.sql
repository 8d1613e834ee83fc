-- table: outbox
WITH r AS (
    INSERT INTO outbox_relays (token, name, started_at) VALUES ($1, $2, $3) RETURNING id
)
SELECT r.id, pg_advisory_lock($4::int, (r.id % 2147483647)::int) FROM r
-- table: app.jit_outbox
WITH r AS (
    INSERT INTO app.jit_outbox_relays (token, name, started_at) VALUES ($1, $2, $3) RETURNING id
)
SELECT r.id, pg_advisory_lock($4::int, (r.id % 2147483647)::int) FROM r
