-- Before the INSERT of a hand-over: which of the events' aggregates have a
-- pending row or a block visible to the transaction. Their events are left
-- to the owner's read, so that a hand-over never overtakes an earlier
-- event of its aggregate. @aggs holds one (partition, aggregate type,
-- aggregate id) per distinct aggregate.
SELECT o.part, o.aggregate_type, o.aggregate_id FROM {{table}} o
WHERE o.state = 0 AND (o.part, o.aggregate_type, o.aggregate_id) IN (@aggs...)
UNION
SELECT b.part, b.aggregate_type, b.aggregate_id FROM {{table}}_blocked b
WHERE (b.part, b.aggregate_type, b.aggregate_id) IN (@aggs...)
