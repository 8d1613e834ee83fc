-- table: outbox
SELECT 'outbox'::regclass::oid::bigint
-- table: app.jit_outbox
SELECT 'app.jit_outbox'::regclass::oid::bigint
