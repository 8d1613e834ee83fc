-- table: outbox
SELECT COALESCE(DATABASE(), '')
-- table: app.jit_outbox
SELECT COALESCE(DATABASE(), '')
