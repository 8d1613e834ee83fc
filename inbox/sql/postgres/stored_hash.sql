-- The payload hash recorded for an event id. $1 event id.
SELECT payload_hash FROM {{prefix}}_processed WHERE event_id = $1
