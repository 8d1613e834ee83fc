-- As skip_ids.sql for every dead row.
DELETE FROM {{table}}_blocked WHERE dead
