-- Oldest first, through processed_at_idx.
DELETE FROM {{prefix}}_processed WHERE event_id IN (
    SELECT event_id FROM {{prefix}}_processed WHERE processed_at < $1 ORDER BY processed_at LIMIT $2
)
