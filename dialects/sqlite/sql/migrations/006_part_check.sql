-- Refuses a part outside [0, partitions): no relay would read the row.
-- Triggers, as SQLite adds a CHECK only by rebuilding; older bad rows stay
-- (Stats reports them).
CREATE TRIGGER IF NOT EXISTS {{name}}_part_ck_insert BEFORE INSERT ON {{table}}
FOR EACH ROW WHEN NEW.part < 0 OR NEW.part >= (SELECT m.partitions FROM {{table}}_meta m)
BEGIN SELECT RAISE(ABORT, 'jitoutbox: partition out of range (CHECK {{name}}_part_ck)'); END;
CREATE TRIGGER IF NOT EXISTS {{name}}_part_ck_update BEFORE UPDATE OF part ON {{table}}
FOR EACH ROW WHEN NEW.part < 0 OR NEW.part >= (SELECT m.partitions FROM {{table}}_meta m)
BEGIN SELECT RAISE(ABORT, 'jitoutbox: partition out of range (CHECK {{name}}_part_ck)'); END
