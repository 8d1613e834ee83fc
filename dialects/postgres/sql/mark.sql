-- Marks published at @at (NULL: deletes) the rows of @seqs (an array
-- literal) in partitions @token owns, and removes the retry blocks of
-- @unblock (an array literal of seqs, NULL for none). The statements live in
-- {{table}}_mark (migration 002): prepared once, no wait for the WAL flush.
SELECT {{table}}_mark(@token, @seqs, @unblock, @at)
