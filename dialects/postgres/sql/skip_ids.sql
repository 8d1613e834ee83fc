-- Removes the blocks of dead rows, which stay dead, so later rows of their
-- aggregates flow.
WITH d AS (
    DELETE FROM {{table}}_blocked b USING {{table}} o
    WHERE b.seq = o.seq AND o.state = 2 AND o.id IN (SELECT unnest(@ids::text::uuid[]))
    RETURNING 1
)
SELECT count(*) FROM d
