-- Multi-row INSERT for the in-memory hand-over: this prefix, insert_row.sql
-- once per event, then insert_handoff_tail.sql. Returns (seq, id, free) per
-- row: free when the row's aggregate has no pending row and no block
-- visible to the transaction, so that handing it to its partition's owner
-- cannot overtake an earlier event of the aggregate. The outer SELECT runs
-- on the statement's snapshot, which does not include the rows this INSERT
-- writes: rows of one aggregate inserted together are free together.
WITH ins AS (
INSERT INTO {{table}} (id, aggregate_type, aggregate_id, event_type, payload, payload_json, content_type, headers, idempotency_key, critical, created_at, next_attempt_at, part) VALUES
