-- table: outbox
WITH ins AS (
INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, payload_json, content_type, headers, idempotency_key, critical, created_at, next_attempt_at, deliver_at, part) VALUES ($1::text::uuid, $2, $3, $4, $5, $6::text::json, $7, $8::text::json, $9, $10, $11,
 GREATEST(now() + $12::bigint * interval '1 microsecond', $13::timestamptz, now()),
 GREATEST(now() + $14::bigint * interval '1 microsecond', $15::timestamptz), $16::integer),
($17::text::uuid, $18, $19, $20, $21, $22::text::json, $23, $24::text::json, $25, $26, $27,
 GREATEST(now() + $28::bigint * interval '1 microsecond', $29::timestamptz, now()),
 GREATEST(now() + $30::bigint * interval '1 microsecond', $31::timestamptz), $32::integer)
RETURNING seq, id, part, aggregate_type, aggregate_id
)
SELECT ins.seq, ins.id::text,
       NOT EXISTS (
           SELECT 1 FROM outbox e
           WHERE e.state = 0 AND e.part = ins.part
             AND e.aggregate_type = ins.aggregate_type AND e.aggregate_id = ins.aggregate_id
       ) AND NOT EXISTS (
           SELECT 1 FROM outbox_blocked b
           WHERE b.part = ins.part AND b.aggregate_type = ins.aggregate_type AND b.aggregate_id = ins.aggregate_id
       )
FROM ins
-- table: app.jit_outbox
WITH ins AS (
INSERT INTO app.jit_outbox (id, aggregate_type, aggregate_id, event_type, payload, payload_json, content_type, headers, idempotency_key, critical, created_at, next_attempt_at, deliver_at, part) VALUES ($1::text::uuid, $2, $3, $4, $5, $6::text::json, $7, $8::text::json, $9, $10, $11,
 GREATEST(now() + $12::bigint * interval '1 microsecond', $13::timestamptz, now()),
 GREATEST(now() + $14::bigint * interval '1 microsecond', $15::timestamptz), $16::integer),
($17::text::uuid, $18, $19, $20, $21, $22::text::json, $23, $24::text::json, $25, $26, $27,
 GREATEST(now() + $28::bigint * interval '1 microsecond', $29::timestamptz, now()),
 GREATEST(now() + $30::bigint * interval '1 microsecond', $31::timestamptz), $32::integer)
RETURNING seq, id, part, aggregate_type, aggregate_id
)
SELECT ins.seq, ins.id::text,
       NOT EXISTS (
           SELECT 1 FROM app.jit_outbox e
           WHERE e.state = 0 AND e.part = ins.part
             AND e.aggregate_type = ins.aggregate_type AND e.aggregate_id = ins.aggregate_id
       ) AND NOT EXISTS (
           SELECT 1 FROM app.jit_outbox_blocked b
           WHERE b.part = ins.part AND b.aggregate_type = ins.aggregate_type AND b.aggregate_id = ins.aggregate_id
       )
FROM ins
