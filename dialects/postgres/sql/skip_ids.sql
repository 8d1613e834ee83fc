-- Removes the blocks of dead rows (which stay dead), so that the later rows
-- of their aggregates flow. Returns the count. $1 array literal of event ids.
WITH d AS (
    DELETE FROM {{table}}_blocked b USING {{table}} o
    WHERE b.seq = o.seq AND o.state = 2 AND o.id = ANY ($1::text::uuid[])
    RETURNING 1
)
SELECT count(*) FROM d
