SELECT last_seq FROM {{prefix}}_aggregates WHERE aggregate_type = ?1 AND aggregate_id = ?2
