-- table: outbox
INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, content_type, headers, idempotency_key, critical, created_at, next_attempt_at, deliver_at, part) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?),
(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
-- table: jit_outbox
INSERT INTO jit_outbox (id, aggregate_type, aggregate_id, event_type, payload, content_type, headers, idempotency_key, critical, created_at, next_attempt_at, deliver_at, part) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?),
(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
