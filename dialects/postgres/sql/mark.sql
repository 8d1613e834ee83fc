-- Marks published at @at (NULL: deletes) the rows of @seqs (an array
-- literal) in partitions @token owns, and removes the retry blocks of
-- @unblock (an array literal of seqs, NULL for none). The statements live in
-- {{table}}_mark_v2 (sql/functions/mark_v2.sql): prepared once, no wait
-- for the WAL flush.
SELECT {{table}}_mark_v2(@token, @seqs, @unblock, @at)
