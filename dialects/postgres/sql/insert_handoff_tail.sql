-- Tail of insert_handoff.sql.
RETURNING seq, id, part, aggregate_type, aggregate_id
)
SELECT ins.seq, ins.id::text,
       NOT EXISTS (
           SELECT 1 FROM {{table}} e
           WHERE e.state = 0 AND e.part = ins.part
             AND e.aggregate_type = ins.aggregate_type AND e.aggregate_id = ins.aggregate_id
       ) AND NOT EXISTS (
           SELECT 1 FROM {{table}}_blocked b
           WHERE b.part = ins.part AND b.aggregate_type = ins.aggregate_type AND b.aggregate_id = ins.aggregate_id
       )
FROM ins
