-- Tail of insert_handoff.sql. Returns (seq, id, free) per row: free when
-- the row's aggregate has no pending row and no block visible to the
-- transaction other than the rows of this statement, so that handing it to
-- its partition's owner cannot overtake an earlier event of the aggregate.
-- SQLite evaluates RETURNING as each row is written, so the rows of this
-- statement are left out by id: rows of one aggregate inserted together are
-- free together. @ids is a JSON array of this statement's event ids.
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
