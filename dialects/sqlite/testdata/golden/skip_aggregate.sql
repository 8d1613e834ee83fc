-- table: outbox
DELETE FROM outbox_blocked
WHERE seq IN (SELECT o.seq FROM outbox o WHERE o.state = 2 AND o.aggregate_type = ?1 AND o.aggregate_id = ?2)
-- table: jit_outbox
DELETE FROM jit_outbox_blocked
WHERE seq IN (SELECT o.seq FROM jit_outbox o WHERE o.state = 2 AND o.aggregate_type = ?1 AND o.aggregate_id = ?2)
