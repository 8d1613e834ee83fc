-- The record columns every read returns first, in the order of
-- sqlkit.ScanRead (sqlkit.RecordColumns of them), for the reads to include
-- as {{record_columns}}.
o.seq, o.id, o.aggregate_type, o.aggregate_id, o.event_type, o.payload, o.content_type,
       o.headers, o.idempotency_key, o.critical, o.created_at, o.attempts, o.part
