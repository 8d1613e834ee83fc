-- table: outbox
INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, content_type, headers, idempotency_key, critical, created_at, next_attempt_at, deliver_at, part) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
 GREATEST(COALESCE(UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, UTC_TIMESTAMP(6)), COALESCE(?, UTC_TIMESTAMP(6))),
 GREATEST(UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, COALESCE(?, UTC_TIMESTAMP(6))), ?),
(?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
 GREATEST(COALESCE(UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, UTC_TIMESTAMP(6)), COALESCE(?, UTC_TIMESTAMP(6))),
 GREATEST(UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, COALESCE(?, UTC_TIMESTAMP(6))), ?)
RETURNING seq, id, TRUE
-- table: app.jit_outbox
INSERT INTO app.jit_outbox (id, aggregate_type, aggregate_id, event_type, payload, content_type, headers, idempotency_key, critical, created_at, next_attempt_at, deliver_at, part) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
 GREATEST(COALESCE(UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, UTC_TIMESTAMP(6)), COALESCE(?, UTC_TIMESTAMP(6))),
 GREATEST(UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, COALESCE(?, UTC_TIMESTAMP(6))), ?),
(?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
 GREATEST(COALESCE(UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, UTC_TIMESTAMP(6)), COALESCE(?, UTC_TIMESTAMP(6))),
 GREATEST(UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, COALESCE(?, UTC_TIMESTAMP(6))), ?)
RETURNING seq, id, TRUE
