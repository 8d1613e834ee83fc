-- Creates the aggregate's row if missing, so order_read can lock it.
INSERT INTO {{prefix}}_aggregates (aggregate_type, aggregate_id, last_seq, updated_at)
VALUES ($1, $2, 0, $3)
ON CONFLICT (aggregate_type, aggregate_id) DO NOTHING
