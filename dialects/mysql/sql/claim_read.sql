-- Reads back the leased rows. Args: seqs..., owner.
SELECT seq, id, aggregate_type, aggregate_id, event_type, payload, content_type, headers, idempotency_key, critical, created_at, attempts
FROM {{table}}
WHERE seq IN ({{seqs}}) AND locked_by = ?
ORDER BY seq
