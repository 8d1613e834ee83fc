-- table: outbox
WITH u AS (
    UPDATE outbox_partitions SET owner = NULL WHERE part = ANY ($1::text::int[]) AND owner = $2 RETURNING part
)
SELECT count(*) FILTER (WHERE pg_advisory_unlock($3::int, p)) FROM unnest($1::text::int[]) AS p
-- table: app.jit_outbox
WITH u AS (
    UPDATE app.jit_outbox_partitions SET owner = NULL WHERE part = ANY ($1::text::int[]) AND owner = $2 RETURNING part
)
SELECT count(*) FILTER (WHERE pg_advisory_unlock($3::int, p)) FROM unnest($1::text::int[]) AS p
