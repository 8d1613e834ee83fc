-- Multi-row INSERT: this prefix, then insert_row.sql once per event.
INSERT INTO {{table}} (id, aggregate_type, aggregate_id, event_type, payload, content_type, headers, idempotency_key, critical, created_at, next_attempt_at, deliver_at, part) VALUES
