-- Rows with part outside [0, P), for the table's partition count P (from
-- {{table}}_meta, fixed at creation), are refused: such a row is in no
-- partition a relay owns, so it would never be published. Writers of
-- every version write PartitionOf(...) < P, so they are not affected.
-- SQLite cannot add a CHECK to a table (only a rebuild can), so triggers
-- refuse them, on INSERT and on an UPDATE of part. Rows written before
-- are kept; Stats counts them (BadPartition) and the Inspector reports
-- them (column part).
CREATE TRIGGER IF NOT EXISTS {{name}}_part_ck_insert BEFORE INSERT ON {{table}}
FOR EACH ROW WHEN NEW.part < 0 OR NEW.part >= (SELECT m.partitions FROM {{table}}_meta m)
BEGIN SELECT RAISE(ABORT, 'jitoutbox: partition out of range (CHECK {{name}}_part_ck)'); END;
CREATE TRIGGER IF NOT EXISTS {{name}}_part_ck_update BEFORE UPDATE OF part ON {{table}}
FOR EACH ROW WHEN NEW.part < 0 OR NEW.part >= (SELECT m.partitions FROM {{table}}_meta m)
BEGIN SELECT RAISE(ABORT, 'jitoutbox: partition out of range (CHECK {{name}}_part_ck)'); END
