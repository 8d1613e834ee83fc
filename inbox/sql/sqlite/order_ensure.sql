-- Creates the aggregate's row if missing; SQLite's single writer needs no
-- row lock.
INSERT INTO {{prefix}}_aggregates (aggregate_type, aggregate_id, last_seq, updated_at)
VALUES (?1, ?2, 0, ?3)
ON CONFLICT (aggregate_type, aggregate_id) DO NOTHING
