-- The record columns every read returns first, in the order of
-- sqlkit.ScanRead (sqlkit.RecordColumns of them, then the JSON payload
-- as text), for the reads to include as {{record_columns}}. The read
-- function of migration 005 ({{table}}_read, read.sql) returns the same
-- columns from its own SELECT.
o.seq, o.id::text, o.aggregate_type, o.aggregate_id, o.event_type, o.payload, o.content_type,
       o.headers::text, o.idempotency_key, o.critical, o.created_at, o.attempts, o.part, o.payload_json::text
