-- Idempotency keys deduplicate: idempotency_key is unique per table where
-- it is not NULL (events without a key are not in the index). An INSERT
-- whose key is already in the table fails ("UNIQUE constraint failed:
-- <table>.idempotency_key"; the dialect reports it as
-- dialects.ErrDuplicateIdempotencyKey). Rows that share a key in an
-- existing table stop the migration with an error naming them, before the
-- index is built.
-- step: check-idempotency-keys
CREATE UNIQUE INDEX IF NOT EXISTS {{name}}_idempotency_key_idx ON {{table}} (idempotency_key) WHERE idempotency_key IS NOT NULL;
