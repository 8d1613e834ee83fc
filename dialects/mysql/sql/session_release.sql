-- Gives up partitions owned by the token: clears the owner, before
-- session_unlock.sql frees their locks. {{parts}} expands to one ? per
-- partition. Args: token, partitions...
UPDATE {{table}}_partitions SET owner = NULL WHERE owner = ? AND part IN ({{parts}})
