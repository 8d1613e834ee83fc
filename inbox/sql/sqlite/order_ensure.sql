-- Makes sure the aggregate has a row (last_seq 0). SQLite has one writer
-- at a time, so no row lock is needed. ?1 aggregate type, ?2 aggregate
-- id, ?3 now.
INSERT INTO {{prefix}}_aggregates (aggregate_type, aggregate_id, last_seq, updated_at)
VALUES (?1, ?2, 0, ?3)
ON CONFLICT (aggregate_type, aggregate_id) DO NOTHING
