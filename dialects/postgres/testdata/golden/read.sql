-- table: outbox
SELECT * FROM outbox_read_v5($1, $2, $3, $4, $5)
-- table: app.jit_outbox
SELECT * FROM app.jit_outbox_read_v5($1, $2, $3, $4, $5)
