-- Removes the blocks of dead rows (which stay dead), so that the later rows
-- of their aggregates flow: Skip, and Requeue before requeue_ids.sql (one
-- transaction). {{ids}} expands to one ? per event id. Args: ids...
DELETE b FROM {{table}}_blocked b JOIN {{table}} o ON o.seq = b.seq
WHERE o.state = 2 AND o.id IN ({{ids}})
