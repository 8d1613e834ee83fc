-- table: outbox
SELECT o.part, o.aggregate_type, o.aggregate_id FROM outbox o
WHERE o.state = 0 AND (o.part, o.aggregate_type, o.aggregate_id) IN ((?, ?, ?), (?, ?, ?))
UNION
SELECT b.part, b.aggregate_type, b.aggregate_id FROM outbox_blocked b
WHERE (b.part, b.aggregate_type, b.aggregate_id) IN ((?, ?, ?), (?, ?, ?))
-- table: app.jit_outbox
SELECT o.part, o.aggregate_type, o.aggregate_id FROM app.jit_outbox o
WHERE o.state = 0 AND (o.part, o.aggregate_type, o.aggregate_id) IN ((?, ?, ?), (?, ?, ?))
UNION
SELECT b.part, b.aggregate_type, b.aggregate_id FROM app.jit_outbox_blocked b
WHERE (b.part, b.aggregate_type, b.aggregate_id) IN ((?, ?, ?), (?, ?, ?))
