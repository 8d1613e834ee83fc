-- As skip_ids.sql for every dead row: the blocks of dead rows are the dead
-- blocks.
DELETE FROM {{table}}_blocked WHERE dead
