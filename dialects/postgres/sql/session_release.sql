-- Gives up partitions @token owns: clears the owner, frees each lock.
WITH u AS (
    UPDATE {{table}}_partitions SET owner = NULL WHERE part = ANY (@parts::text::int[]) AND owner = @token RETURNING part
)
SELECT count(*) FILTER (WHERE pg_advisory_unlock(@part_ns::int, p)) FROM unnest(@parts::text::int[]) AS p
