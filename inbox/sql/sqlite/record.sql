-- Records the event as processed; 0 rows affected = seen before. ?1 event
-- id, ?2 aggregate type, ?3 aggregate id, ?4 event type, ?5 seq (NULL:
-- unknown), ?6 payload hash, ?7 now (unix microseconds).
INSERT INTO {{prefix}}_processed (event_id, aggregate_type, aggregate_id, event_type, seq, payload_hash, processed_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
ON CONFLICT (event_id) DO NOTHING
