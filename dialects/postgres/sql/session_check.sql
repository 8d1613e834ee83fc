-- On the session's connection (an answer proves it, and with it every
-- advisory lock it holds, alive): the partitions token $1 owns.
SELECT part FROM {{table}}_partitions WHERE owner = $1
