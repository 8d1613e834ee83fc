-- As skip_ids.sql for one aggregate. ?1 aggregate type, ?2 aggregate id.
DELETE FROM {{table}}_blocked
WHERE seq IN (SELECT o.seq FROM {{table}} o WHERE o.state = 2 AND o.aggregate_type = ?1 AND o.aggregate_id = ?2)
