-- Removes the blocks of the dead rows of events @ids (which stay dead), so
-- that the later rows of their aggregates flow: Skip, and Requeue before
-- requeue_ids.sql (one transaction).
DELETE b FROM {{table}}_blocked b JOIN {{table}} o ON o.seq = b.seq
WHERE o.state = 2 AND o.id IN (@ids...)
