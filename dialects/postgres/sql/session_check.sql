-- On the session's connection (an answer proves it, and with it every
-- advisory lock it holds, alive): the partitions @token owns.
SELECT part FROM {{table}}_partitions WHERE owner = @token
