-- The columns of an inspected row, in the order of sqlkit's rowScan (its
-- inspect scan order), ending with the table's partition count (the row's
-- partition must be below it), for the inspect_*.sql statements to include
-- as {{inspect_columns}}; the payload-less listings include them as
-- {{inspect_columns_without_payload}}, where each {{payload X}} column is
-- NULL instead of X.
o.seq,
       o.id::text,
       o.aggregate_type,
       o.aggregate_id,
       o.event_type,
       {{payload o.payload}},
       o.content_type,
       o.headers::text,
       o.idempotency_key,
       o.critical,
       o.created_at,
       o.attempts,
       {{payload o.payload_json::text}},
       o.state,
       o.next_attempt_at,
       o.part,
       o.last_error,
       o.published_at,
       (SELECT m.partitions FROM {{table}}_meta m)
