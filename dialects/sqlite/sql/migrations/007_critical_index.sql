-- Pending time-critical rows for read_critical.sql: its cost follows them,
-- not the backlog. Optional for the read (it falls back to claim_idx), so
-- expand only.
CREATE INDEX IF NOT EXISTS {{name}}_critical_idx ON {{table}} (seq) WHERE state = 0 AND critical
