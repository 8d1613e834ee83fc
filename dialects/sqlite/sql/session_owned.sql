-- The partitions token ?1 still owns with a lease running at ?2, read
-- without renewing them (for a session whose relay row is gone).
SELECT part FROM {{table}}_partitions WHERE owner = ?1 AND expires_at > ?2
