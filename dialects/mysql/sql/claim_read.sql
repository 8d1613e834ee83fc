-- Reads back the rows this claim leased. Args: seqs..., owner, lease until.
SELECT seq, id, aggregate_type, aggregate_id, event_type, payload, content_type, headers, idempotency_key, critical, created_at, attempts
FROM {{table}}
WHERE seq IN ({{seqs}}) AND locked_by = ? AND locked_until = ? AND state = 0
ORDER BY seq
