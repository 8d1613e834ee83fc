-- Pending time-critical rows, for the relay's critical read
-- (read_critical.sql): it walks this index in seq order, so its cost
-- follows the time-critical rows pending, not the backlog of ordinary
-- ones. Only pending time-critical rows have entries: an ordinary row's
-- insert and mark never touch it. Relays of the previous version do not
-- use it, and the critical read works without it (walking claim_idx):
-- expand only.
CREATE INDEX IF NOT EXISTS {{name}}_critical_idx ON {{table}} (seq) WHERE state = 0 AND critical
