-- A row is free when its aggregate has no pending row or block other than
-- this statement's rows, left out by @ids because SQLite evaluates RETURNING
-- as each row is written: rows of one aggregate inserted together are free
-- together.
RETURNING seq, id,
    NOT EXISTS (
        SELECT 1 FROM {{table}} e
        WHERE e.state = 0 AND e.aggregate_type = {{table}}.aggregate_type AND e.aggregate_id = {{table}}.aggregate_id
          AND e.part = {{table}}.part
          AND e.id NOT IN (SELECT value FROM json_each(@ids))
    ) AND NOT EXISTS (
        SELECT 1 FROM {{table}}_blocked b
        WHERE b.part = {{table}}.part AND b.aggregate_type = {{table}}.aggregate_type
          AND b.aggregate_id = {{table}}.aggregate_id
    )
