-- As requeue_block_ids.sql for one aggregate. Args: aggregate type, id.
UPDATE {{table}}_blocked b JOIN {{table}} o ON o.seq = b.seq
SET b.dead = FALSE, b.`until` = '9999-12-31 23:59:59.999999'
WHERE o.state = 2 AND o.aggregate_type = ? AND o.aggregate_id = ?
