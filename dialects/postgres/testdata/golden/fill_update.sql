-- table: outbox
UPDATE outbox SET part = $1 WHERE seq = ANY ($2::text::bigint[])
-- table: app.jit_outbox
UPDATE app.jit_outbox SET part = $1 WHERE seq = ANY ($2::text::bigint[])
