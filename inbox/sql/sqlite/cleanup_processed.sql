-- Oldest first, through processed_at_idx.
DELETE FROM {{prefix}}_processed WHERE rowid IN (
    SELECT rowid FROM {{prefix}}_processed WHERE processed_at < ?1 ORDER BY processed_at LIMIT ?2
)
