-- table: outbox
INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, payload, content_type, headers, idempotency_key, critical, created_at, next_attempt_at, deliver_at, part) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?),
(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
RETURNING seq, id,
    NOT EXISTS (
        SELECT 1 FROM outbox e
        WHERE e.state = 0 AND e.aggregate_type = outbox.aggregate_type AND e.aggregate_id = outbox.aggregate_id
          AND e.part = outbox.part
          AND e.id NOT IN (SELECT value FROM json_each(?))
    ) AND NOT EXISTS (
        SELECT 1 FROM outbox_blocked b
        WHERE b.part = outbox.part AND b.aggregate_type = outbox.aggregate_type
          AND b.aggregate_id = outbox.aggregate_id
    )
-- table: jit_outbox
INSERT INTO jit_outbox (id, aggregate_type, aggregate_id, event_type, payload, content_type, headers, idempotency_key, critical, created_at, next_attempt_at, deliver_at, part) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?),
(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
RETURNING seq, id,
    NOT EXISTS (
        SELECT 1 FROM jit_outbox e
        WHERE e.state = 0 AND e.aggregate_type = jit_outbox.aggregate_type AND e.aggregate_id = jit_outbox.aggregate_id
          AND e.part = jit_outbox.part
          AND e.id NOT IN (SELECT value FROM json_each(?))
    ) AND NOT EXISTS (
        SELECT 1 FROM jit_outbox_blocked b
        WHERE b.part = jit_outbox.part AND b.aggregate_type = jit_outbox.aggregate_type
          AND b.aggregate_id = jit_outbox.aggregate_id
    )
