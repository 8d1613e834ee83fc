-- Records the event as processed; 0 rows affected = seen before. INSERT
-- IGNORE, not ON DUPLICATE KEY UPDATE, whose rows-affected count depends on
-- the connection's clientFoundRows flag. IGNORE would also turn a string
-- too long or not valid UTF-8 into a warning and a truncated value: Handle
-- refuses those before this statement. A concurrent insert of the same id
-- waits for the other transaction and then counts as a conflict if it
-- committed. Args: event id, aggregate type, aggregate id, event type, seq
-- (NULL: unknown), payload hash, now.
INSERT IGNORE INTO {{prefix}}_processed (event_id, aggregate_type, aggregate_id, event_type, seq, payload_hash, processed_at)
VALUES (?, ?, ?, ?, ?, ?, ?)
