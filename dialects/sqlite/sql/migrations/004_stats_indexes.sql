-- Dead rows, for Stats: counting them reads this small index instead of
-- the whole table (the published rows kept for Retention outnumber them by
-- far). Dead rows are few, so the index costs little.
CREATE INDEX IF NOT EXISTS {{name}}_dead_idx ON {{table}} (seq) WHERE state = 2;
