-- A row when the outbox table exists (made before versioned migrations).
SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '{{table}}'
