-- The payload hash recorded for an event id, by a locking read, which sees
-- the latest committed row whatever the transaction's snapshot. Args:
-- event id.
SELECT payload_hash FROM {{prefix}}_processed WHERE event_id = ? LOCK IN SHARE MODE
