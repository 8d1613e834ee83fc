-- table: outbox
DELETE b FROM outbox_blocked b JOIN outbox o ON o.seq = b.seq
WHERE o.state = 2 AND o.aggregate_type = ? AND o.aggregate_id = ?
-- table: app.jit_outbox
DELETE b FROM app.jit_outbox_blocked b JOIN app.jit_outbox o ON o.seq = b.seq
WHERE o.state = 2 AND o.aggregate_type = ? AND o.aggregate_id = ?
