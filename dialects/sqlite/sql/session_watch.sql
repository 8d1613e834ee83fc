-- The live relay sessions at @now, counted as session_view.sql counts them:
-- WaitChange reads them after another connection wrote, to see a relay
-- join or leave.
SELECT token FROM {{table}}_relays r
WHERE r.expires_at > @now
   OR EXISTS (SELECT 1 FROM {{table}}_partitions p WHERE p.owner = r.token AND p.expires_at > @now)
