-- Unique idempotency keys where not NULL (reported as
-- ErrDuplicateIdempotencyKey); the Go step refuses existing duplicates.
-- step: check-idempotency-keys
CREATE UNIQUE INDEX IF NOT EXISTS {{name}}_idempotency_key_idx ON {{table}} (idempotency_key) WHERE idempotency_key IS NOT NULL;
