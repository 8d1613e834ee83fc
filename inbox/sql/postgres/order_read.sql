-- The last applied seq of an aggregate, its row locked until the end of the
-- transaction. $1 aggregate type, $2 aggregate id.
SELECT last_seq FROM {{prefix}}_aggregates WHERE aggregate_type = $1 AND aggregate_id = $2 FOR UPDATE
