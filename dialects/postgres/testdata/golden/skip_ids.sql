-- table: outbox
WITH d AS (
    DELETE FROM outbox_blocked b USING outbox o
    WHERE b.seq = o.seq AND o.state = 2 AND o.id IN (SELECT unnest($1::text::uuid[]))
    RETURNING 1
)
SELECT count(*) FROM d
-- table: app.jit_outbox
WITH d AS (
    DELETE FROM app.jit_outbox_blocked b USING app.jit_outbox o
    WHERE b.seq = o.seq AND o.state = 2 AND o.id IN (SELECT unnest($1::text::uuid[]))
    RETURNING 1
)
SELECT count(*) FROM d
