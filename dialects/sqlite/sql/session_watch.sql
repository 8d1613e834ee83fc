-- The live relay sessions, counted as session_view.sql does, for WaitChange.
SELECT token FROM {{table}}_relays r
WHERE r.expires_at > @now
   OR EXISTS (SELECT 1 FROM {{table}}_partitions p WHERE p.owner = r.token AND p.expires_at > @now)
