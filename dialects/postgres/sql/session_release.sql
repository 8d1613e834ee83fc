-- Gives up partitions $1 (int array literal) owned by token $3: clears the
-- owner, then frees each advisory lock (namespace $2).
WITH u AS (
    UPDATE {{table}}_partitions SET owner = NULL WHERE part = ANY ($1::text::int[]) AND owner = $3 RETURNING part
)
SELECT count(*) FILTER (WHERE pg_advisory_unlock($2::int, p)) FROM unnest($1::text::int[]) AS p
