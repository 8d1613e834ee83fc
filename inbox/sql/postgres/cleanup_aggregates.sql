-- Uses aggregates_updated_idx.
DELETE FROM {{prefix}}_aggregates WHERE (aggregate_type, aggregate_id) IN (
    SELECT aggregate_type, aggregate_id FROM {{prefix}}_aggregates WHERE updated_at < $1 ORDER BY updated_at LIMIT $2
)
