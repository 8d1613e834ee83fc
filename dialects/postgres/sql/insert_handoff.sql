-- Multi-row INSERT for the in-memory hand-over (prefix, insert_row.sql per
-- event, insert_handoff_tail.sql). A row is free when its aggregate has no
-- pending row or block in the statement's snapshot, which excludes this
-- INSERT's rows: rows of one aggregate inserted together are free together.
WITH ins AS (
INSERT INTO {{table}} (id, aggregate_type, aggregate_id, event_type, payload, payload_json, content_type, headers, idempotency_key, critical, created_at, next_attempt_at, deliver_at, part) VALUES
