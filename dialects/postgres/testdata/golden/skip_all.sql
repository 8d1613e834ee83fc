-- table: outbox
WITH d AS (
    DELETE FROM outbox_blocked b WHERE b.dead
    RETURNING 1
)
SELECT count(*) FROM d
-- table: app.jit_outbox
WITH d AS (
    DELETE FROM app.jit_outbox_blocked b WHERE b.dead
    RETURNING 1
)
SELECT count(*) FROM d
