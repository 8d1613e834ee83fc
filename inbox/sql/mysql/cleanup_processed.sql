-- Args: before, limit (processed_at_idx).
DELETE FROM {{prefix}}_processed WHERE processed_at < ? ORDER BY processed_at LIMIT ?
