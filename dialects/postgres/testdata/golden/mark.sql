-- table: outbox
SELECT outbox_mark_v3($1, $2, $3, $4)
-- table: app.jit_outbox
SELECT app.jit_outbox_mark_v3($1, $2, $3, $4)
