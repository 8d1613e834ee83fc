SELECT payload_hash FROM {{prefix}}_processed WHERE event_id = $1
