-- $1 owner, $2 lease until, $3 now, $4 limit, $5 NULL for a scan or an
-- array literal of event ids (the fast path), $6 NULL or the speculative
-- claim's window. One autocommit statement: the
-- lock, the claim and the planner settings live in the function (schema.sql).
SELECT seq, id, aggregate_type, aggregate_id, event_type, payload, content_type, headers,
       idempotency_key, critical, created_at, attempts, payload_json
FROM {{table}}_claim($1, $2, $3, $4, $5, $6)
