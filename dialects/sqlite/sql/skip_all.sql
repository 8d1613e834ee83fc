-- As skip_ids.sql for every dead row's block.
DELETE FROM {{table}}_blocked WHERE dead
