-- Multi-row INSERT that leases the rows of a time-critical transaction to
-- the relay in the committing process (dialects.LeasingInserter): this
-- prefix, insert_row.sql once per event, then insert_leased_tail.sql. A row
-- is leased only when its aggregate has no pending row, so that it cannot
-- overtake an earlier event of its aggregate; rows of one aggregate in this
-- statement do not see each other and are leased together.
WITH v (id, aggregate_type, aggregate_id, event_type, payload, content_type, headers, idempotency_key, critical, created_at, next_attempt_at) AS (VALUES
