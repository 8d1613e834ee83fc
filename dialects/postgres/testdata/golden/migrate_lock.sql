-- table: outbox
SELECT pg_advisory_xact_lock(hashtext('jitoutbox.migrate'))
-- table: app.jit_outbox
SELECT pg_advisory_xact_lock(hashtext('jitoutbox.migrate'))
