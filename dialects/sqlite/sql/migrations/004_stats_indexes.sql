-- Stats counts dead rows from this small index, not the whole table.
CREATE INDEX IF NOT EXISTS {{name}}_dead_idx ON {{table}} (seq) WHERE state = 2;
