-- table: outbox
INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, payload_json, content_type, headers, idempotency_key, critical, created_at, next_attempt_at, deliver_at, part) VALUES ($1::text::uuid, $2, $3, $4, $5, $6::text::json, $7, $8::text::json, $9, $10, $11,
 GREATEST(now() + $12::bigint * interval '1 microsecond', $13::timestamptz, now()),
 GREATEST(now() + $14::bigint * interval '1 microsecond', $15::timestamptz), $16::integer),
($17::text::uuid, $18, $19, $20, $21, $22::text::json, $23, $24::text::json, $25, $26, $27,
 GREATEST(now() + $28::bigint * interval '1 microsecond', $29::timestamptz, now()),
 GREATEST(now() + $30::bigint * interval '1 microsecond', $31::timestamptz), $32::integer)
-- table: app.jit_outbox
INSERT INTO app.jit_outbox (id, aggregate_type, aggregate_id, event_type, payload, payload_json, content_type, headers, idempotency_key, critical, created_at, next_attempt_at, deliver_at, part) VALUES ($1::text::uuid, $2, $3, $4, $5, $6::text::json, $7, $8::text::json, $9, $10, $11,
 GREATEST(now() + $12::bigint * interval '1 microsecond', $13::timestamptz, now()),
 GREATEST(now() + $14::bigint * interval '1 microsecond', $15::timestamptz), $16::integer),
($17::text::uuid, $18, $19, $20, $21, $22::text::json, $23, $24::text::json, $25, $26, $27,
 GREATEST(now() + $28::bigint * interval '1 microsecond', $29::timestamptz, now()),
 GREATEST(now() + $30::bigint * interval '1 microsecond', $31::timestamptz), $32::integer)
