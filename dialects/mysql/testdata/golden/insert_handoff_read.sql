-- table: outbox
SELECT seq, id, TRUE FROM outbox WHERE id IN (?, ?)
-- table: app.jit_outbox
SELECT seq, id, TRUE FROM app.jit_outbox WHERE id IN (?, ?)
