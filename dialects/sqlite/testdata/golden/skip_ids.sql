-- table: outbox
DELETE FROM outbox_blocked
WHERE seq IN (SELECT o.seq FROM outbox o WHERE o.state = 2 AND o.id IN (SELECT value FROM json_each(?1)))
-- table: jit_outbox
DELETE FROM jit_outbox_blocked
WHERE seq IN (SELECT o.seq FROM jit_outbox o WHERE o.state = 2 AND o.id IN (SELECT value FROM json_each(?1)))
