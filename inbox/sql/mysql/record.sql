-- 0 rows affected = seen before. INSERT IGNORE: ON DUPLICATE KEY UPDATE's
-- count depends on clientFoundRows; Handle refuses the values IGNORE would
-- truncate. Args: id, aggregate type, aggregate id, event type, seq, hash, now.
INSERT IGNORE INTO {{prefix}}_processed (event_id, aggregate_type, aggregate_id, event_type, seq, payload_hash, processed_at)
VALUES (?, ?, ?, ?, ?, ?, ?)
