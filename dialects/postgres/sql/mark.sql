-- Marks published (or deletes, @at NULL) the rows of @seqs in partitions
-- @token owns and removes the retry blocks of @unblock; see mark_v3.sql.
SELECT {{table}}_mark_v3(@token, @seqs, @unblock, @at)
