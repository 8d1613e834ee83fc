-- Locked until the transaction ends. Args: aggregate type, aggregate id.
SELECT last_seq FROM {{prefix}}_aggregates WHERE aggregate_type = ? AND aggregate_id = ? FOR UPDATE
