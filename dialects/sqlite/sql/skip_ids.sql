-- Removes the blocks of dead rows (which stay dead), so that the later rows
-- of their aggregates flow. ?1 JSON array of event ids.
DELETE FROM {{table}}_blocked
WHERE seq IN (SELECT o.seq FROM {{table}} o WHERE o.state = 2 AND o.id IN (SELECT value FROM json_each(?1)))
