-- table: outbox
INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, payload_json, content_type, headers, idempotency_key, critical, created_at, next_attempt_at, part) VALUES ($1::text::uuid, $2, $3, $4, $5, $6::text::json, $7, $8::text::json, $9, $10, $11, $12, $13::integer),
($14::text::uuid, $15, $16, $17, $18, $19::text::json, $20, $21::text::json, $22, $23, $24, $25, $26::integer)
-- table: app.jit_outbox
INSERT INTO app.jit_outbox (id, aggregate_type, aggregate_id, event_type, payload, payload_json, content_type, headers, idempotency_key, critical, created_at, next_attempt_at, part) VALUES ($1::text::uuid, $2, $3, $4, $5, $6::text::json, $7, $8::text::json, $9, $10, $11, $12, $13::integer),
($14::text::uuid, $15, $16, $17, $18, $19::text::json, $20, $21::text::json, $22, $23, $24, $25, $26::integer)
