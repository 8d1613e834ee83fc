-- Creates the aggregate's row if missing and locks it. Args: aggregate
-- type, aggregate id, now.
INSERT INTO {{prefix}}_aggregates (aggregate_type, aggregate_id, last_seq, updated_at)
VALUES (?, ?, 0, ?)
ON DUPLICATE KEY UPDATE last_seq = last_seq
