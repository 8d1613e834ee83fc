-- table: outbox
UPDATE outbox SET state = 0, attempts = 0, next_attempt_at = MIN(?1, created_at)
WHERE state = 2
RETURNING seq
-- table: jit_outbox
UPDATE jit_outbox SET state = 0, attempts = 0, next_attempt_at = MIN(?1, created_at)
WHERE state = 2
RETURNING seq
