-- The last applied seq of an aggregate. ?1 aggregate type, ?2 aggregate id.
SELECT last_seq FROM {{prefix}}_aggregates WHERE aggregate_type = ?1 AND aggregate_id = ?2
