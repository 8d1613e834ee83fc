-- Removes the blocks of dead rows, which stay dead, so later rows of their
-- aggregates flow (also Requeue's first step).
DELETE b FROM {{table}}_blocked b JOIN {{table}} o ON o.seq = b.seq
WHERE o.state = 2 AND o.id IN (@ids...)
