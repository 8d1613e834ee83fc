-- The last applied seq of an aggregate, its row locked until the end of the
-- transaction. Args: aggregate type, aggregate id.
SELECT last_seq FROM {{prefix}}_aggregates WHERE aggregate_type = ? AND aggregate_id = ? FOR UPDATE
