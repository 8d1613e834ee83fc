-- Removes the blocks of dead rows, which stay dead, so later rows of their
-- aggregates flow.
DELETE FROM {{table}}_blocked
WHERE seq IN (SELECT o.seq FROM {{table}} o WHERE o.state = 2 AND o.id IN (SELECT value FROM json_each(@ids)))
