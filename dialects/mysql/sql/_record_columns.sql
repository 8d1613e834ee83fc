-- Columns every read returns first, in sqlkit.ScanRead's order.
o.seq, o.id, o.aggregate_type, o.aggregate_id, o.event_type, o.payload, o.content_type,
       o.headers, o.idempotency_key, o.critical, o.created_at, o.attempts, o.part, o.deliver_at
