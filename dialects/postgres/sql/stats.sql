-- One scan: counts per state and the oldest pending created_at.
SELECT
    COALESCE(SUM(CASE WHEN state = 0 THEN 1 ELSE 0 END), 0),
    COALESCE(SUM(CASE WHEN state = 2 THEN 1 ELSE 0 END), 0),
    COALESCE(SUM(CASE WHEN state = 1 THEN 1 ELSE 0 END), 0),
    MIN(CASE WHEN state = 0 THEN created_at END)
FROM {{table}}
