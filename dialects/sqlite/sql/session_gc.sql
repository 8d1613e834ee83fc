-- Forgets relay sessions whose lease ran out and that own no partition with
-- a running lease (an owning session renews only those).
DELETE FROM {{table}}_relays
WHERE expires_at < @before
  AND NOT EXISTS (SELECT 1 FROM {{table}}_partitions p
                  WHERE p.owner = {{table}}_relays.token AND p.expires_at > @now)
