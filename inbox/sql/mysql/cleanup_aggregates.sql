-- Deletes the aggregates not updated since a time (aggregates_updated_idx).
-- Args: before, limit.
DELETE FROM {{prefix}}_aggregates WHERE updated_at < ? ORDER BY updated_at LIMIT ?
