-- A locking read sees the latest committed row whatever the snapshot.
-- Args: event id.
SELECT payload_hash FROM {{prefix}}_processed WHERE event_id = ? LOCK IN SHARE MODE
