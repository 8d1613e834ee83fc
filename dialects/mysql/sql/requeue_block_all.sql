-- As requeue_block_ids.sql for every dead row: the blocks of dead rows are
-- the dead blocks.
UPDATE {{table}}_blocked SET dead = FALSE, `until` = '9999-12-31 23:59:59.999999' WHERE dead
