-- Scheduled events: deliver_at is a row's due time (NULL for a row never
-- scheduled, as every row of earlier writers); deliver_idx finds the next
-- one (NextDue) and counts those not yet due (Stats). Relays of this code
-- read through read_v3 (installed by Migrate from this version on), which
-- reads deliver_at and the holds. See docs/schema.md.
ALTER TABLE {{table}} ADD COLUMN IF NOT EXISTS deliver_at TIMESTAMPTZ;
CREATE INDEX IF NOT EXISTS {{name}}_deliver_idx ON {{table}} (deliver_at) WHERE state = 0 AND deliver_at IS NOT NULL;
-- Aggregates whose later rows wait for a scheduled row: one hold each, on
-- the lowest held scheduled seq, until the latest due time among them.
CREATE TABLE IF NOT EXISTS {{table}}_held (
    part           INTEGER     NOT NULL,
    aggregate_type TEXT        NOT NULL,
    aggregate_id   TEXT        NOT NULL,
    seq            BIGINT      NOT NULL,
    until          TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (part, aggregate_type, aggregate_id)
);
CREATE INDEX IF NOT EXISTS {{name}}_held_until_idx ON {{table}}_held (until)
