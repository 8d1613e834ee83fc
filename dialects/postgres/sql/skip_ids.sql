-- Removes the blocks of the dead rows of events @ids (an array literal),
-- which stay dead, so that the later rows of their aggregates flow.
-- Returns the count.
WITH d AS (
    DELETE FROM {{table}}_blocked b USING {{table}} o
    WHERE b.seq = o.seq AND o.state = 2 AND o.id = ANY (@ids::text::uuid[])
    RETURNING 1
)
SELECT count(*) FROM d
