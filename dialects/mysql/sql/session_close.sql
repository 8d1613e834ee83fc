-- Ends a session, step 1: the partitions @token owns, a plain read that
-- locks nothing; session_release.sql then clears them by primary key. An
-- UPDATE on owner would walk and lock every partition's row, and deadlock
-- with the marks of the relays that stay (see session_own.sql).
SELECT part FROM {{table}}_partitions WHERE owner = @token
