-- One table's probe of Activity, which joins one per table with UNION ALL:
-- the table's name, its schema version, and when its next pending row is
-- due by @now (the process's clock, SQLite's own): the first due row in seq
-- order (a walk of claim_idx, the pending rows, that stops there: a backlog
-- costs one row), else the earliest due time of the pending rows (all of
-- claim_idx; an idle table's is empty). TestActivityPlan checks the plan.
SELECT '{{table}}',
       (SELECT max(m.version) FROM {{table}}_migrations m),
       coalesce((SELECT o.next_attempt_at FROM {{table}} o INDEXED BY {{name}}_claim_idx
                 WHERE o.state = 0 AND o.next_attempt_at <= @now ORDER BY o.seq LIMIT 1),
                (SELECT min(o.next_attempt_at) FROM {{table}} o INDEXED BY {{name}}_claim_idx WHERE o.state = 0))
