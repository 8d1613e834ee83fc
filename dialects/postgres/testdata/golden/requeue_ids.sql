-- table: outbox
WITH r AS (
    UPDATE outbox SET state = 0, attempts = 0, next_attempt_at = LEAST($1, created_at)
    WHERE state = 2 AND id IN (SELECT unnest($2::text::uuid[]))
    RETURNING seq
), d AS (
    DELETE FROM outbox_blocked b USING r WHERE b.seq = r.seq
)
SELECT count(*) FROM r
-- table: app.jit_outbox
WITH r AS (
    UPDATE app.jit_outbox SET state = 0, attempts = 0, next_attempt_at = LEAST($1, created_at)
    WHERE state = 2 AND id IN (SELECT unnest($2::text::uuid[]))
    RETURNING seq
), d AS (
    DELETE FROM app.jit_outbox_blocked b USING r WHERE b.seq = r.seq
)
SELECT count(*) FROM r
