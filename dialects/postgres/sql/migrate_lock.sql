-- Serialises concurrent Migrate calls: CREATE ... IF NOT EXISTS is not
-- race-free on PostgreSQL.
SELECT pg_advisory_xact_lock(hashtext('jitoutbox.migrate'))
