-- On a watch connection: blocks until the member lock of another relay's
-- session (namespace $1, its id $2) is free, i.e. that relay is gone, then
-- frees it again.
SELECT pg_advisory_lock($1::int, $2::int), pg_advisory_unlock($1::int, $2::int)
