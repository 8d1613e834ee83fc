-- $1 seq, $2 now, $3 aggregate type, $4 aggregate id.
UPDATE {{prefix}}_aggregates SET last_seq = $1, updated_at = $2 WHERE aggregate_type = $3 AND aggregate_id = $4
