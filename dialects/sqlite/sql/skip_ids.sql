-- Removes the blocks of the dead rows of events @ids (a JSON array), which
-- stay dead, so that the later rows of their aggregates flow.
DELETE FROM {{table}}_blocked
WHERE seq IN (SELECT o.seq FROM {{table}} o WHERE o.state = 2 AND o.id IN (SELECT value FROM json_each(@ids)))
