-- Args: aggregate type, aggregate id, seq, now.
UPDATE {{prefix}}_aggregates SET last_seq = ?, updated_at = ? WHERE aggregate_type = ? AND aggregate_id = ?
