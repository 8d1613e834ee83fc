-- Serialises concurrent Migrate calls (CREATE ... IF NOT EXISTS is not
-- race-free on PostgreSQL). $1 lock key. Not part of Schema().
SELECT pg_advisory_xact_lock($1)
