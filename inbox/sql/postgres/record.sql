-- 0 rows affected = seen before; a concurrent insert of the same id waits
-- and conflicts if the other commits.
INSERT INTO {{prefix}}_processed (event_id, aggregate_type, aggregate_id, event_type, seq, payload_hash, processed_at)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (event_id) DO NOTHING
