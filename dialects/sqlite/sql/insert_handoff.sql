-- Multi-row INSERT for the in-memory hand-over, ended by insert_handoff_tail.sql.
INSERT INTO {{table}} (id, aggregate_type, aggregate_id, event_type, payload, content_type, headers, idempotency_key, critical, created_at, next_attempt_at, deliver_at, part) VALUES
