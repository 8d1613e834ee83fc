-- The blocks of dead rows that Requeue moves back to pending (before
-- requeue_ids.sql, in one transaction): no longer dead, they hold the later
-- rows of their aggregates until the requeued row is published (the
-- relay's mark removes the block of a published row that was attempted
-- before, and requeue_ids.sql sets attempts to 1). Reads ahead of a relay
-- that began a chain of reads before the requeue rely on it: they do not
-- look for an earlier pending row of an aggregate below their horizon.
-- {{ids}} expands to one ? per event id. Args: ids...
UPDATE {{table}}_blocked b JOIN {{table}} o ON o.seq = b.seq
SET b.dead = FALSE, b.`until` = '9999-12-31 23:59:59.999999'
WHERE o.state = 2 AND o.id IN ({{ids}})
