-- Args: before, limit (aggregates_updated_idx).
DELETE FROM {{prefix}}_aggregates WHERE updated_at < ? ORDER BY updated_at LIMIT ?
