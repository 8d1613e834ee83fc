-- Forgets relay sessions whose lease ran out before @before and that own no
-- partition with a lease running at @now: a session that owns partitions
-- renews only their leases (see session_check.sql), and stays listed.
DELETE FROM {{table}}_relays
WHERE expires_at < @before
  AND NOT EXISTS (SELECT 1 FROM {{table}}_partitions p
                  WHERE p.owner = {{table}}_relays.token AND p.expires_at > @now)
