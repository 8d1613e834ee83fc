-- Deletes the oldest processed ids older than a time (processed_at_idx).
-- Args: before, limit.
DELETE FROM {{prefix}}_processed WHERE processed_at < ? ORDER BY processed_at LIMIT ?
