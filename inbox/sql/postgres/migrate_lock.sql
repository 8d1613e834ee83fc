-- Serialises Migrate calls: CREATE ... IF NOT EXISTS is not race-free.
SELECT pg_advisory_xact_lock($1)
