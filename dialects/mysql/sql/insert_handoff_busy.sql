-- Which of the hand-over's aggregates have a pending row or block visible
-- to the transaction: their events are left to the owner's read, so a
-- hand-over never overtakes an earlier event.
SELECT o.part, o.aggregate_type, o.aggregate_id FROM {{table}} o
WHERE o.state = 0 AND (o.part, o.aggregate_type, o.aggregate_id) IN (@aggs...)
UNION
SELECT b.part, b.aggregate_type, b.aggregate_id FROM {{table}}_blocked b
WHERE (b.part, b.aggregate_type, b.aggregate_id) IN (@aggs...)
