-- Uses aggregates_updated_idx.
DELETE FROM {{prefix}}_aggregates WHERE rowid IN (
    SELECT rowid FROM {{prefix}}_aggregates WHERE updated_at < ?1 ORDER BY updated_at LIMIT ?2
)
