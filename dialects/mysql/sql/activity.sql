-- One table's probe of Activity, which joins one per table with UNION ALL:
-- the table's name, its schema version, and when its next pending row is
-- due by the server's UTC_TIMESTAMP(6): the first due row in seq order (a
-- walk of claim_idx's pending range that stops there: a backlog costs one
-- row), else the earliest due time of the pending rows (all of the range;
-- an idle table's is empty). The hints keep the optimizer off the primary
-- key, which also walks the published rows: TestActivityPlan checks the plan.
SELECT '{{table}}',
       (SELECT MAX(m.version) FROM {{table}}_migrations m),
       COALESCE((SELECT o.next_attempt_at FROM {{table}} o USE INDEX ({{name}}_claim_idx)
                 WHERE o.state = 0 AND o.next_attempt_at <= UTC_TIMESTAMP(6) ORDER BY o.seq LIMIT 1),
                (SELECT MIN(o.next_attempt_at) FROM {{table}} o USE INDEX ({{name}}_claim_idx) WHERE o.state = 0))
